import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { mintToken } from '../../src/auth/token-minter';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { startChildService, type ChildService } from '../support/child-service';
import { parseSse } from '../support/orders-client';
import { orderRequest } from '../support/provider-factories';
import { testDatabaseUrl } from '../support/test-database';
import { until } from '../support/until';

const JWT_SECRET = 'shutdown-drain-test-jwt-secret-0123456789abcdef';
const DRAIN_MS = 4_000;

/** A live stream read as it arrives. */
interface OpenStream {
  text: string;
  endedAt?: number;
  ended: Promise<void>;
}

function openStream(base: string, token: string, orderId: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    httpRequest(`${base}/v1/orders/${orderId}/events`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      res.setEncoding('utf8');
      const stream: OpenStream = { text: '', ended: new Promise((done) => res.on('close', done)) };
      void stream.ended.then(() => (stream.endedAt = Date.now()));
      res.on('data', (chunk: string) => (stream.text += chunk));
      resolve(stream);
    })
      .on('error', reject)
      .end();
  });
}

/**
 * A rolling restart's SIGTERM, on the real entry point: for SHUTDOWN_DRAIN_MS the instance keeps
 * serving everything but /health/ready, which answers 503 at once; then it stops, and its live
 * streams end with a `retry:` field so that clients come back through the load balancer.
 */
describe('SIGTERM drain', () => {
  let service: ChildService;

  beforeAll(async () => {
    service = await startChildService(
      {
        DATABASE_URL: testDatabaseUrl(),
        AUTH_JWT_SECRET: JWT_SECRET,
        SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
        LOG_LEVEL: 'info',
      },
      { readyPath: '/health/ready', startTimeoutMs: 90_000 },
    );
  }, 120_000);
  afterAll(() => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  });

  it('answers 503 on /health/ready at once while other routes, new streams included, are served; then streams end with retry:', async () => {
    const { base } = service;
    const token = await mintToken({ sub: 'cust_drain', roles: ['customer'], ttl: '1h', secret: JWT_SECRET });
    const auth = { authorization: `Bearer ${token}` };
    const created = await fetch(`${base}/v1/orders`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify(orderRequest({ wallet: TEST_WALLETS.NO_CALLBACK })),
    });
    expect(created.status).toBe(201);
    const order = (await created.json()) as { id: string; status: string };
    expect(order.status).toBe('PROCESSING');
    const before = await openStream(base, token, order.id);
    await until('the first stream has its snapshot', () => parseSse(before.text).length === 1);
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);

    service.child.kill('SIGTERM');
    const signalled = Date.now();
    await until('/health/ready answers 503', async () => (await fetch(`${base}/health/ready`)).status === 503, 2_000);
    const notReadyAt = Date.now();

    // The drain: everything else is served as before, and the open stream stays open.
    const ready = await fetch(`${base}/health/ready`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('content-type')).toMatch(/problem\+json/);
    expect(((await ready.json()) as { code: string }).code).toBe('not_ready');
    expect((await fetch(`${base}/health/live`)).status).toBe(200);
    const read = await fetch(`${base}/v1/orders/${order.id}`, { headers: auth });
    expect(read.status).toBe(200);
    const during = await openStream(base, token, order.id);
    await until('the stream opened during the drain has its snapshot', () => parseSse(during.text).length === 1);
    expect(before.endedAt).toBeUndefined();

    // Then the instance stops: both streams end with a reconnection delay, after their events.
    await Promise.all([before.ended, during.ended]);
    expect(await service.exited).toEqual({ code: 0, signal: null });
    for (const stream of [before, during]) {
      expect(stream.text).toMatch(/event: status\n[\s\S]*\n\nretry: \d{4}\n\n$/);
      const retryMs = Number(/retry: (\d+)/.exec(stream.text)![1]);
      expect(retryMs).toBeGreaterThanOrEqual(1_000);
      expect(retryMs).toBeLessThan(3_000);
      // Not before the drain was over.
      expect(stream.endedAt! - signalled).toBeGreaterThanOrEqual(DRAIN_MS - 100);
    }
    expect(notReadyAt - signalled).toBeLessThan(DRAIN_MS / 2);
    expect(service.output()).toContain('"msg":"draining: /health/ready answers 503, requests still served"');
    await expect(fetch(`${base}/health/live`)).rejects.toThrow();
  }, 60_000);
});
