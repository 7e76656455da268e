import request from 'supertest';
import { PayinClient } from '../../src/provider/clients/payin.client';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer, waitForOrder } from '../support/orders-client';
import { payinBody } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** Parses Prometheus text into `name{labels} value` pairs. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}
const find = (all: Map<string, number>, name: string, ...labels: string[]) =>
  [...all.entries()].filter(([key]) => key.startsWith(name) && labels.every((l) => key.includes(l))).reduce((sum, [, v]) => sum + v, 0);

describe('operations', () => {
  let sandbox: RunningSandbox;
  let service: TestService;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ callbackDelayMs: 50 });
    service = await startTestService(sandbox, { CORS_ORIGINS: 'https://shop.example.com', PUBLIC_RATE_LIMIT_PER_MINUTE: '40' }, [], {
      listen: true,
    });
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  it('/metrics exposes HTTP, provider, token, budget, order and callback series after traffic', async () => {
    const alice = await customer(service);
    const order = (await alice.createOrder({ wallet: TEST_WALLETS.SUCCESS })).body;
    await waitForOrder(service, alice.token, order.id, (o) => o.status === 'SUCCEEDED');
    await request(service.server).get('/v1/orders/not-there').auth(alice.token, { type: 'bearer' }).expect(404);

    const res = await request(service.server).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const all = samples(res.text);
    expect(find(all, 'http_requests_total', 'route="/v1/orders"', 'method="POST"', 'status="201"')).toBeGreaterThanOrEqual(1);
    expect(find(all, 'http_requests_total', 'route="/v1/orders/:id"', 'status="404"')).toBeGreaterThanOrEqual(1);
    expect(find(all, 'http_request_duration_seconds_count', 'route="/v1/orders"')).toBeGreaterThanOrEqual(1);
    expect(find(all, 'provider_calls_total', 'endpoint="payin.collect"', 'outcome="answered"')).toBeGreaterThanOrEqual(1);
    expect(find(all, 'provider_call_duration_seconds_count', 'endpoint="payin.collect"')).toBeGreaterThanOrEqual(1);
    expect(find(all, 'provider_token_refreshes_total', 'result="obtained"')).toBe(1);
    expect(all.get('provider_agent_budget_remaining')).toBeLessThan(600);
    expect(find(all, 'orders_by_status', 'status="SUCCEEDED"')).toBeGreaterThanOrEqual(1);
    expect(find(all, 'provider_callbacks_total', 'outcome="success"', 'result="APPLIED"')).toBeGreaterThanOrEqual(1);
    expect(find(all, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('/metrics does not query orders on each scrape: orders by status are counted in the background', async () => {
    const alice = await customer(service);
    await request(service.server).get('/metrics').expect(200);
    const statements: string[] = [];
    // Every statement the service sends through its pool (Prisma's and the written-out ones), at the driver.
    const stopObserving = service.prisma.observeStatements((sql) => statements.push(sql));
    try {
      // The driver sees the statements of a request that reads orders…
      await alice.listOrders().expect(200);
      expect(statements.some((sql) => /\borders\b/.test(sql))).toBe(true);
      statements.length = 0;
      // …and none of a scrape.
      for (let i = 0; i < 5; i++) expect((await request(service.server).get('/metrics').expect(200)).text).toContain('orders_by_status');
      expect(statements.filter((sql) => /\borders\b/.test(sql))).toEqual([]);
    } finally {
      stopObserving();
    }
  });

  it('sends security headers on every answer', async () => {
    const res = await request(service.server).get('/health/live').expect(200);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    // A plain-HTTP service asks no browser to move to https (src/common/security-headers.ts).
    expect(res.headers['strict-transport-security']).toBeUndefined();
    expect(res.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    expect(res.headers['x-frame-options']).toBeDefined();
  });

  it('sends the same security headers on a 404 and on a refusal before routing', async () => {
    const expected = (await request(service.server).get('/health/live').expect(200)).headers;
    const notFound = await request(service.server).get('/no/such/route').expect(404);
    // Refused by the query-string bound, an onRequest hook that runs before the handler.
    const refused = await request(service.server).get(`/v1/orders?${Array.from({ length: 1001 }, (_, i) => `k${i}=1`).join('&')}`);
    expect(refused.status).toBe(400);
    for (const res of [notFound, refused]) {
      for (const name of [
        'content-security-policy',
        'strict-transport-security',
        'x-content-type-options',
        'x-frame-options',
        'referrer-policy',
      ])
        expect([name, res.headers[name]]).toEqual([name, expected[name]]);
    }
  });

  it('allows CORS for the configured origins only', async () => {
    const allowed = await request(service.server)
      .options('/v1/orders')
      .set('origin', 'https://shop.example.com')
      .set('access-control-request-method', 'POST');
    expect(allowed.headers['access-control-allow-origin']).toBe('https://shop.example.com');
    expect(allowed.headers['access-control-allow-headers']).toContain('idempotency-key');
    const denied = await request(service.server)
      .options('/v1/orders')
      .set('origin', 'https://evil.example')
      .set('access-control-request-method', 'POST');
    expect(denied.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('refuses bodies over the size limit with 413 problem+json', async () => {
    const alice = await customer(service);
    const res = await request(service.server)
      .post('/v1/orders')
      .auth(alice.token, { type: 'bearer' })
      .set('idempotency-key', 'big')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ description: 'x'.repeat(1_100_000) }));
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
  });

  it('provider calls outside a request still count in the metrics', async () => {
    await service.get(PayinClient).collect(payinBody(), { service: 1 });
    const all = samples((await request(service.server).get('/metrics')).text);
    expect(find(all, 'provider_calls_total', 'endpoint="payin.collect"')).toBeGreaterThanOrEqual(2);
  });
  it('limits public routes per client, with 429 problem+json and Retry-After; authenticated routes are not limited', async () => {
    const statuses: number[] = [];
    let limited: request.Response | undefined;
    for (let i = 0; i < 45; i++) {
      const res = await request(service.server).get('/health/live');
      statuses.push(res.status);
      if (res.status === 429) limited ??= res;
    }
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(40);
    expect(limited).toBeDefined();
    expect(limited!.headers['content-type']).toMatch(/problem\+json/);
    expect(limited!.headers['retry-after']).toBeDefined();
    expect(limited!.body.code).toBe('too_many_requests');
    const alice = await customer(service);
    for (let i = 0; i < 5; i++) await alice.listOrders().expect(200);
  });
});
