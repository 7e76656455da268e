import { randomUUID } from 'node:crypto';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { connectionAdmissionOf } from '../../src/http/connection-limit';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { until } from '../support/until';
import { openSseClient, type SseClient } from './live-streams-sse-client';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A keep-alive connection spoken raw: one request at a time, each answer read to its end by its
 * Content-Length, the connection kept open after it. `closed` once the server closed it.
 */
class KeptConnection {
  closed = false;
  private received = '';
  private waiting?: { resolve(status: number): void; reject(error: Error): void };

  private constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.received += chunk;
      this.settle();
    });
    // A reset is one way for the server to close: `closed` says it either way.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closed = true;
      this.waiting?.reject(new Error('closed by the server before an answer'));
      this.waiting = undefined;
    });
  }

  static open(port: number): Promise<KeptConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new KeptConnection(socket));
      });
    });
  }

  /** Sends GET `path` and resolves with the answer's status (rejects when the server closes first). */
  get(path = '/health/live'): Promise<number> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error('closed'));
      this.waiting = { resolve, reject };
      this.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    });
  }

  /** Writes part of a request (the next one begins arriving) and nothing more. */
  beginRequest(): void {
    this.socket.write('GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
  }

  close(): void {
    this.socket.destroy();
  }

  private settle() {
    const headEnd = this.received.indexOf('\r\n\r\n');
    if (headEnd === -1 || !this.waiting) return;
    const head = this.received.slice(0, headEnd);
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    if (Buffer.byteLength(this.received.slice(headEnd + 4)) < length) return;
    this.received = this.received.slice(headEnd + 4 + length);
    const { resolve } = this.waiting;
    this.waiting = undefined;
    resolve(Number(head.split(' ')[1]));
  }
}

/** A newcomer: connects and sends one request; its answer (or failure) and the time from connect to answer. */
async function newcomer(port: number): Promise<{ status: number | string; ms: number; connection?: KeptConnection }> {
  const started = performance.now();
  try {
    const connection = await KeptConnection.open(port);
    const status = await connection.get();
    return { status, ms: performance.now() - started, connection };
  } catch (error) {
    return { status: (error as Error).message, ms: performance.now() - started };
  }
}

/**
 * Defect: at the connection cap node closed every new connection before any JavaScript saw it,
 * whatever the open ones were doing. 40 keep-alive connections that had each made one request and
 * then idled kept every new client out for the keep-alive timeout (72 s); one request per
 * connection now and then kept them out for good. Now an idle connection makes room.
 */
describe('a client holding idle connections keeps no one out', () => {
  const CAP = 40;
  /** The contract's promise: a new connection is admitted within 1 s. */
  const ADMITTED_WITHIN_MS = 1_000;
  let sandbox: RunningSandbox;
  let service: TestService;
  let port: number;
  const held: KeptConnection[] = [];
  const streams: SseClient[] = [];
  let alice: Awaited<ReturnType<typeof customer>>;
  let bob: Awaited<ReturnType<typeof customer>>;
  let aliceOrderId: string;
  let bobOrderId: string;
  const admissionTimes: number[] = [];

  const openNow = () => connectionAdmissionOf(service.server)!.open();
  /** The cap's worth of connections of one client, each with one request answered, then idle (oldest first). */
  async function fillWithIdle(): Promise<KeptConnection[]> {
    const filled: KeptConnection[] = [];
    while (openNow() < CAP) {
      const connection = await KeptConnection.open(port);
      expect(await connection.get()).toBe(200);
      filled.push(connection);
    }
    held.push(...filled);
    return filled;
  }

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(
      sandbox,
      { HTTP_MAX_CONNECTIONS: String(CAP), PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000', SSE_KEEPALIVE_SECONDS: '1' },
      [],
      { listen: true },
    );
    port = (service.server.address() as AddressInfo).port;
    alice = await customer(service);
    bob = await customer(service);
    aliceOrderId = (await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK })).body.id;
    bobOrderId = (await bob.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK })).body.id;
    // The orders were created through node's keep-alive agent: its connections must not count in the tests' cap.
    await until('the set-up connections to close', () => openNow() === 0, 15_000, 10);
  }, 30_000);
  afterEach(async () => {
    for (const connection of held.splice(0)) connection.close();
    for (const stream of streams.splice(0)) stream.close();
    await until('every connection to be gone', () => openNow() === 0, 5_000, 10);
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
    // The measured admission times, for the record (docs/security.md quotes them).
    process.stdout.write(`idle-connections: admission ms max ${Math.max(...admissionTimes).toFixed(1)} of ${admissionTimes.length}\n`);
  });

  it('the cap held by idle keep-alive connections: newcomers are served at once, the longest idle closed for each', async () => {
    const idle = await fillWithIdle();
    expect(connectionAdmissionOf(service.server)!.cap).toBe(CAP);
    expect(openNow()).toBe(CAP);
    for (let i = 0; i < 5; i++) {
      const came = await newcomer(port);
      if (came.connection) held.push(came.connection);
      admissionTimes.push(came.ms);
      expect([came.status, came.ms < ADMITTED_WITHIN_MS]).toEqual([200, true]);
    }
    // Oldest idle first: the first five of the client's connections, and no other.
    await until('the evicted connections to close', () => idle.filter((c) => c.closed).length === 5, 5_000, 10);
    expect(idle.map((c) => c.closed)).toEqual(idle.map((_, i) => i < 5));
    expect(openNow()).toBe(CAP);
    expect(service.logs.entries().some((entry) => entry.msg === 'connection limit reached: idle connections closed for new ones')).toBe(
      true,
    );
  });

  it('the cap held by connections each renewed by one request every second, reopened when closed: newcomers are still served within 1 s', async () => {
    await fillWithIdle();
    let holding = true;
    // The holder: each of its connections makes a request every second; one the server closed is opened again at once.
    const holder = (async () => {
      while (holding) {
        for (let i = 0; i < held.length && holding; i++) {
          if (held[i].closed) held[i] = await KeptConnection.open(port).catch(() => held[i]);
          void held[i].get().catch(() => undefined);
          await sleep(1_000 / CAP);
        }
      }
    })();
    const times: number[] = [];
    try {
      for (let i = 0; i < 10; i++) {
        const came = await newcomer(port);
        // Each newcomer leaves at once: the holder's reopened connections fill the cap again.
        came.connection?.close();
        times.push(came.ms);
        expect([i, came.status, came.ms < ADMITTED_WITHIN_MS]).toEqual([i, 200, true]);
        await sleep(300);
      }
    } finally {
      holding = false;
      await holder;
    }
    admissionTimes.push(...times);
  }, 30_000);

  it('live streams, requests in flight and a request arriving on a kept connection are never closed for a newcomer', async () => {
    // Busy: 30 live streams (two users), 4 stalled request bodies, 2 kept connections whose next request is half sent.
    for (let i = 0; i < 15; i++) streams.push(await openSseClient(port, alice.token, aliceOrderId));
    for (let i = 0; i < 15; i++) streams.push(await openSseClient(port, bob.token, bobOrderId));
    expect(streams.map((s) => s.status)).toEqual(streams.map(() => 200));
    const stalled: KeptConnection[] = [];
    for (let i = 0; i < 4; i++) {
      const connection = await KeptConnection.open(port);
      connection.socket.write(
        `POST /v1/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${alice.token}\r\nContent-Type: application/json\r\n` +
          `Idempotency-Key: ${randomUUID()}\r\nContent-Length: 100\r\n\r\n{`,
      );
      stalled.push(connection);
    }
    const arriving: KeptConnection[] = [];
    for (let i = 0; i < 2; i++) {
      const connection = await KeptConnection.open(port);
      expect(await connection.get()).toBe(200);
      connection.beginRequest();
      arriving.push(connection);
    }
    held.push(...stalled, ...arriving);
    // The rest of the cap: idle connections, opened last (so the busy ones are older than any idle one).
    const idle = await fillWithIdle();
    expect(idle).toHaveLength(CAP - 36);
    await sleep(100);

    // Each idle one makes room for one newcomer (who then stays, busy with a half-sent request) ...
    for (let i = 0; i < idle.length; i++) {
      const came = await newcomer(port);
      expect([came.status, came.ms < ADMITTED_WITHIN_MS]).toEqual([200, true]);
      admissionTimes.push(came.ms);
      came.connection!.beginRequest();
      held.push(came.connection!);
    }
    await until('the idle connections to close', () => idle.every((c) => c.closed), 5_000, 10);
    // ... and with nothing idle left, a newcomer is closed unanswered: no busy connection made room.
    const refused = await newcomer(port);
    expect(refused.status).toBe('closed by the server before an answer');
    await sleep(200);
    expect([...stalled, ...arriving].map((c) => c.closed)).toEqual([...stalled, ...arriving].map(() => false));
    expect(streams.map((s) => s.ended)).toEqual(streams.map(() => false));
    // The streams still flow (keep-alive comments every second).
    const seen = streams.map((s) => s.body.length);
    await until('a keep-alive on every stream', () => streams.every((s, i) => s.body.length > seen[i]), 3_000, 10);
  }, 30_000);
});
