import { randomUUID } from 'node:crypto';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { request as httpRequest } from 'node:http';
import { connectionCap, fileDescriptorLimit, HTTP_TIMEOUTS } from '../../src/common/connection-limits';
import { DATABASE_POOL_SIZE } from '../../src/database/database';
import { connectionAdmissionOf } from '../../src/http/connection-limit';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { orderRequest } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { until } from '../support/until';
import { openSseClient } from './live-streams-sse-client';

/** A socket of the test and what came back on it, with when the server closed it. */
interface Stalled {
  socket: Socket;
  received: string;
  openedAt: number;
  closedAt?: number;
}

/** Opens a socket to the service, writes `text` and then nothing more. */
function stall(port: number, text: string): Promise<Stalled> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const stalled: Stalled = { socket, received: '', openedAt: Date.now() };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (stalled.received += chunk));
    socket.on('close', () => (stalled.closedAt = Date.now()));
    // Before the connection, an error fails the test; after it, a reset is one way for the server to close.
    socket.on('error', reject);
    socket.once('connect', () => {
      socket.write(text);
      resolve(stalled);
    });
  });
}

/** Headers announcing 100 bytes of body, then one byte: the slow client of the defect. */
const stalledBody = (headers = '') =>
  `POST /v1/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nIdempotency-Key: ${randomUUID()}\r\n${headers}Content-Length: 100\r\n\r\n{`;
const stalledHeaders = () => 'GET /health/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ';

/** The first answer in `text`: status, headers, body (Content-Length bodies only). */
function firstAnswer(text: string): { status: number; headers: Record<string, string>; body: string } {
  const headEnd = text.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = text.slice(0, headEnd).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  const body = text.slice(headEnd + 4, headEnd + 4 + Number(headers['content-length'] ?? 0));
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

/** One request on a fresh connection, with how long its answer took. */
function timedRequest(
  port: number,
  options: { method: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, agent: false, method: options.method, path: options.path, headers: options.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: Date.now() - started }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

// Strict-Transport-Security is sent only by an https service (PUBLIC_BASE_URL); these instances are plain HTTP.
const SECURITY_HEADER_NAMES = ['content-security-policy', 'x-content-type-options', 'x-frame-options'];

describe('slow clients cannot exhaust the process', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let port: number;
  const sockets: Stalled[] = [];
  const probes: Stalled[] = [];
  const streams: { close(): void }[] = [];

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, { SSE_KEEPALIVE_SECONDS: '1' }, [], { listen: true });
    port = (service.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const { socket } of [...sockets, ...probes]) socket.destroy();
    for (const stream of streams) stream.close();
    await service.close();
    await sandbox.close();
  });

  it('caps the connections below the file-descriptor limit, leaving room for the database pool', () => {
    const limit = fileDescriptorLimit();
    const expected = connectionCap({ fileDescriptorLimit: limit, databasePoolSize: DATABASE_POOL_SIZE });
    const { cap } = connectionAdmissionOf(service.server)!;
    expect(cap).toBe(expected.maxConnections);
    if (limit !== undefined) expect(cap).toBeLessThan(limit - DATABASE_POOL_SIZE);
  });

  it('HTTP_MAX_CONNECTIONS lowers the cap: with every connection busy, connections past it are closed at once, unanswered, and the log says so', async () => {
    const capped = await startTestService(sandbox, { HTTP_MAX_CONNECTIONS: '20' }, [], { listen: true });
    const held: Stalled[] = [];
    try {
      expect(connectionAdmissionOf(capped.server)!.cap).toBe(20);
      const cappedPort = (capped.server.address() as AddressInfo).port;
      for (let i = 0; i < 20; i++) held.push(await stall(cappedPort, stalledHeaders()));
      const open = () => new Promise<number>((resolve) => capped.server.getConnections((_error, count) => resolve(count)));
      for (let tries = 0; (await open()) < 20 && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
      const extra = await Promise.all(Array.from({ length: 5 }, () => stall(cappedPort, stalledHeaders())));
      held.push(...extra);
      await until('the connections past the cap to be closed', () => extra.every((s) => s.closedAt !== undefined), 2_000, 20);
      expect(extra.map((s) => s.received)).toEqual(['', '', '', '', '']);
      expect(held.slice(0, 20).every((s) => s.closedAt === undefined)).toBe(true);
      expect(capped.logs.entries().some((entry) => entry.msg === 'connection limit reached: new connections closed')).toBe(true);
    } finally {
      for (const { socket } of held) socket.destroy();
      await capped.close();
    }
  });

  it('thousands of stalled sockets: the service still answers, closes them with 408 in seconds, and keeps its live streams', async () => {
    // Each stalled socket costs this process two descriptors (both ends): stay well under the limit.
    const limit = fileDescriptorLimit() ?? 1024;
    const count = Math.min(3_000, Math.floor((limit - 2_000) / 2));
    expect(count).toBeGreaterThanOrEqual(500);
    const token = await service.bearer(`cust_${randomUUID().slice(0, 8)}`);
    const auth = `Authorization: Bearer ${token}\r\n`;

    // A live-status stream opened before the flood: a long answer, which no request timeout may cut.
    const created = await timedRequest(port, {
      method: 'POST',
      path: '/v1/orders',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
      body: JSON.stringify(orderRequest({ wallet: TEST_WALLETS.NO_CALLBACK })),
    });
    expect({ status: created.status, body: created.body }).toMatchObject({ status: 201 });
    const stream = await openSseClient(port, token, JSON.parse(created.body).id);
    streams.push(stream);
    expect(stream.status).toBe(200);

    // The flood: a third authenticated with a stalled body, a third anonymous with a stalled body, a third with stalled headers.
    const kinds = [() => stalledBody(auth), () => stalledBody(), stalledHeaders];
    const floodStarted = Date.now();
    for (let i = 0; i < count; i += 250) {
      const batch = await Promise.all(Array.from({ length: Math.min(250, count - i) }, (_, j) => stall(port, kinds[(i + j) % 3]())));
      sockets.push(...batch);
    }
    const floodOpenedMs = Date.now() - floodStarted;

    // Probes sent while every stalled socket is open.
    const anonymous = await stall(port, stalledBody());
    const authenticated = await stall(port, stalledBody(auth));
    probes.push(anonymous, authenticated);
    const [ready, order] = await Promise.all([
      timedRequest(port, { method: 'GET', path: '/health/ready' }),
      timedRequest(port, {
        method: 'POST',
        path: '/v1/orders',
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
        body: JSON.stringify(orderRequest()),
      }),
    ]);
    expect(sockets.filter((s) => s.closedAt !== undefined && s.closedAt - s.openedAt < 1_000 && !s.received)).toHaveLength(0);
    expect([ready.status, ready.ms < 2_000]).toEqual([200, true]);
    expect([order.status, order.ms < 3_000]).toEqual([201, true]);

    // Anonymous: 401 problem+json at once, the body never awaited.
    await until('the 401 of an anonymous stalled request', () => anonymous.received.includes('\r\n\r\n'), 2_000, 20);
    const refused = firstAnswer(anonymous.received);
    expect(refused.status).toBe(401);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(refused.body)).toMatchObject({ status: 401, code: 'unauthenticated' });

    // Authenticated: the body never comes; 408 problem+json with the security headers, then closed.
    await until('the stalled body to be closed', () => authenticated.closedAt !== undefined, HTTP_TIMEOUTS.requestTimeoutMs + 5_000, 20);
    const timedOut = firstAnswer(authenticated.received);
    expect(timedOut.status).toBe(408);
    expect(timedOut.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(timedOut.body)).toMatchObject({ status: 408, code: 'request_timeout', requestId: expect.any(String) });
    for (const name of SECURITY_HEADER_NAMES) expect(timedOut.headers[name]).toBeDefined();
    expect(authenticated.closedAt! - authenticated.openedAt).toBeLessThan(HTTP_TIMEOUTS.requestTimeoutMs + 3_000);

    // Every stalled socket of the flood is closed by the server within seconds of its time limit.
    await until(
      'every stalled socket to be closed',
      () => sockets.every((s) => s.closedAt !== undefined),
      HTTP_TIMEOUTS.requestTimeoutMs + floodOpenedMs + 5_000,
      20,
    );
    for (const [index, kind] of ['authenticated body', 'anonymous body', 'headers'].entries()) {
      const ofKind = sockets.filter((_, i) => i % 3 === index);
      const statuses = new Set(ofKind.map((s) => firstAnswer(s.received).status));
      expect([kind, [...statuses]]).toEqual([kind, kind === 'anonymous body' ? [401] : [408]]);
    }
    expect(service.logs.entries().filter((entry) => (entry.level as number) >= 50)).toEqual([]);

    // The stream outlived every timeout and still receives its keep-alives.
    const seen = stream.body.length;
    await until('a keep-alive on the stream', () => stream.body.length > seen, 3_000, 20);
    expect(stream.ended).toBe(false);
    stream.close();
  }, 60_000);
});
