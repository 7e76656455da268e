import { randomUUID } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { orderRequest } from '../support/provider-factories';
import { testDatabaseUrl } from '../support/test-database';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { inject, postJson, problemShapeFailure } from './hostile-harness';

/**
 * A TCP relay between the service and its database: closing it is a database outage (refused
 * connections, connections cut mid-session) on both the real server and the embedded one.
 */
class DatabaseRelay {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(mode: 'relay' | 'blackhole' = 'relay'): Promise<void> {
    const server = createServer((client) => {
      if (mode === 'blackhole') {
        // Accepts and never answers: a database host that hangs.
        this.sockets.add(client);
        client.on('close', () => this.sockets.delete(client));
        client.on('error', () => undefined);
        return;
      }
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Refuses new connections and cuts the open ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('a database outage answers 503 problem+json with Retry-After, never 500', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let relay: DatabaseRelay;
  let token: string;

  beforeAll(async () => {
    const database = new URL(testDatabaseUrl());
    relay = new DatabaseRelay({ host: database.hostname, port: Number(database.port || 5432) });
    await relay.open();
    database.hostname = '127.0.0.1';
    database.port = String(relay.port);
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, { DATABASE_URL: database.toString() });
    token = await service.bearer(`cust_${randomUUID().slice(0, 8)}`);
  });
  afterAll(async () => {
    await relay?.cut();
    await service?.close().catch(() => undefined);
    await sandbox?.close();
  });

  it('answers normally while the database is there, 503 while it is gone, and normally again once it is back', async () => {
    expect((await inject(service, { method: 'GET', url: '/v1/orders', token })).status).toBe(200);

    await relay.cut();
    const providerCallsBefore = sandbox.state.requests.length;
    for (const attempt of [
      () => inject(service, { method: 'GET', url: '/v1/orders', token }),
      () => inject(service, { method: 'GET', url: `/v1/orders/${randomUUID()}`, token }),
      () => postJson(service, '/v1/orders', token, orderRequest()),
      () => inject(service, { method: 'GET', url: '/v1/orders', token }),
    ]) {
      const answer = await attempt();
      const retryAfter = Number(answer.headers['retry-after']);
      expect({
        status: answer.status,
        code: answer.body?.code,
        problem: problemShapeFailure(answer),
        raw: answer.raw.includes('ECONNREFUSED'),
      }).toEqual({
        status: 503,
        code: 'database_unavailable',
        problem: undefined,
        raw: false,
      });
      expect(retryAfter).toBeGreaterThan(0);
    }
    expect(sandbox.state.requests.length).toBe(providerCallsBefore);

    await relay.open();
    const again = await inject(service, { method: 'GET', url: '/v1/orders', token });
    expect(again.status).toBe(200);
  });

  it('a database that accepts connections and never answers is 503 once the connection wait runs out, not a request hanging forever', async () => {
    await relay.cut();
    await relay.open('blackhole');
    try {
      const started = Date.now();
      const answer = await inject(service, { method: 'GET', url: '/v1/orders', token });
      expect({ status: answer.status, code: answer.body?.code, problem: problemShapeFailure(answer) }).toEqual({
        status: 503,
        code: 'database_unavailable',
        problem: undefined,
      });
      expect(Date.now() - started).toBeLessThan(25_000);
    } finally {
      await relay.cut();
      await relay.open();
    }
    expect((await inject(service, { method: 'GET', url: '/v1/orders', token })).status).toBe(200);
  }, 40_000);
});
