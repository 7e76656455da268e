import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { CallbackUrlsService } from '../../src/orders/callback-urls.service';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer, parseSse, waitForOrder } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { usingRealPostgres } from '../support/test-database';

describe('callbacks, idempotency and access to orders', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  const payinRequests = () => sandbox.state.requests.filter((r) => r.path === '/api/agent/bills/v3');
  const pathOf = (url: string) => {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  };
  /** A PROCESSING order that the sandbox will never call back, and its two URLs. */
  const quietOrder = async (alice: Awaited<ReturnType<typeof customer>>) => {
    const res = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK });
    expect(res.body.status).toBe('PROCESSING');
    return { order: res.body, ...service.get(CallbackUrlsService).urlsFor(res.body.id) };
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  describe('callback tampering changes nothing and answers 404', () => {
    it.each([
      [
        'the failure token on the success URL',
        (u: { successUrl: string; failureUrl: string }) =>
          u.successUrl.replace(/token=.*/, `token=${new URL(u.failureUrl).searchParams.get('token')}`),
      ],
      ['no token', (u: { successUrl: string }) => u.successUrl.replace(/\?token=.*/, '')],
      ['a random token', (u: { successUrl: string }) => u.successUrl.replace(/token=.*/, 'token=' + 'A'.repeat(43))],
      ['an empty token', (u: { successUrl: string }) => u.successUrl.replace(/token=.*/, 'token=')],
    ])('%s', async (_name, tamper) => {
      const alice = await customer(service);
      const quiet = await quietOrder(alice);
      const res = await request(service.server)
        .post(pathOf(tamper(quiet)))
        .send({ status: 'SUCCESS' });
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      const after = (await alice.getOrder(quiet.order.id)).body;
      expect(after.status).toBe('PROCESSING');
      expect(after.callbacks).toEqual([]);
      const stored = await service.prisma.providerCallback.findMany({ where: { pathOrderId: quiet.order.id } });
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({ result: 'REJECTED', orderId: null });
      expect(JSON.stringify(stored[0].query)).not.toMatch(/token=[A-Za-z0-9_-]{20}/);
    });

    it("another order's token", async () => {
      const alice = await customer(service);
      const a = await quietOrder(alice);
      const b = await quietOrder(alice);
      const forged = `/v1/callbacks/payin/${a.order.id}/success?token=${new URL(b.successUrl).searchParams.get('token')}`;
      expect((await request(service.server).post(forged).send({})).status).toBe(404);
      expect((await alice.getOrder(a.order.id)).body.status).toBe('PROCESSING');
      expect((await alice.getOrder(b.order.id)).body.status).toBe('PROCESSING');
    });

    it('an order that does not exist, or a path that is not an order id', async () => {
      expect((await request(service.server).post(`/v1/callbacks/payin/${randomUUID()}/success?token=x`).send({})).status).toBe(404);
      expect((await request(service.server).get('/v1/callbacks/payin/not-a-uuid/failure')).status).toBe(404);
      expect((await request(service.server).get(`/v1/callbacks/payin/${randomUUID()}/maybe?token=x`)).status).toBe(404);
    });
  });

  describe('what the provider may send', () => {
    it('GET with no body, stored with its query and redacted token', async () => {
      const alice = await customer(service);
      const quiet = await quietOrder(alice);
      const res = await request(service.server).get(pathOf(quiet.successUrl) + '&ref=abc');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'received', callbackId: expect.any(String) });
      const stored = await service.prisma.providerCallback.findUniqueOrThrow({ where: { id: res.body.callbackId } });
      expect(stored).toMatchObject({ method: 'GET', result: 'APPLIED', rawBody: null, outcome: 'success' });
      expect(stored.query).toEqual({ token: '[REDACTED]', ref: 'abc' });
    });

    it('a form body, stored exactly as it came', async () => {
      const alice = await customer(service);
      const quiet = await quietOrder(alice);
      const res = await request(service.server).post(pathOf(quiet.failureUrl)).type('form').send('status=FAILED&reason=declined');
      expect(res.status).toBe(200);
      const stored = await service.prisma.providerCallback.findUniqueOrThrow({ where: { id: res.body.callbackId } });
      expect(stored.rawBody).toBe('status=FAILED&reason=declined');
      expect(stored.contentType).toMatch(/x-www-form-urlencoded/);
      expect((await alice.getOrder(quiet.order.id)).body.status).toBe('FAILED');
    });

    it('an empty JSON body, a text body and an unusual content type', async () => {
      const alice = await customer(service);
      for (const send of [
        (r: request.Test) => r.set('content-type', 'application/json').send(''),
        (r: request.Test) => r.set('content-type', 'text/plain').send('PAID'),
        (r: request.Test) => r.set('content-type', 'application/xml').send('<status>PAID</status>'),
      ]) {
        const quiet = await quietOrder(alice);
        const res = await send(request(service.server).post(pathOf(quiet.successUrl)));
        expect(res.status).toBe(200);
        expect((await alice.getOrder(quiet.order.id)).body.status).toBe('SUCCEEDED');
      }
    });

    it('headers are stored without secrets', async () => {
      const alice = await customer(service);
      const quiet = await quietOrder(alice);
      const res = await request(service.server)
        .post(pathOf(quiet.successUrl))
        .set('authorization', 'Bearer provider-secret-xyz')
        .set('x-provider-signature', 'sig')
        .send({ a: 1 });
      const stored = await service.prisma.providerCallback.findUniqueOrThrow({ where: { id: res.body.callbackId } });
      expect(JSON.stringify(stored.headers)).not.toContain('provider-secret-xyz');
      // A signature header is a credential of whoever sent it: kept as present, never in clear.
      expect(stored.headers).toMatchObject({ 'x-provider-signature': '[REDACTED]' });
      expect(stored.rawBody).toBe('{"a":1}');
    });
  });

  describe('storage failures', () => {
    it('a callback that cannot be stored answers 5xx, changes nothing, and its retry is applied', async () => {
      const alice = await customer(service);
      const quiet = await quietOrder(alice);
      // The database refuses this one insert, as a full disk or a lost connection would.
      await service.prisma.$executeRawUnsafe(`
        CREATE OR REPLACE FUNCTION refuse_marked_callbacks() RETURNS trigger AS $$
        BEGIN IF NEW.raw_body = 'REFUSE-ME' THEN RAISE EXCEPTION 'storage unavailable'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
      await service.prisma.$executeRawUnsafe(
        `CREATE TRIGGER refuse_marked_callbacks BEFORE INSERT ON provider_callbacks FOR EACH ROW EXECUTE FUNCTION refuse_marked_callbacks()`,
      );
      try {
        const refused = await request(service.server).post(pathOf(quiet.successUrl)).set('content-type', 'text/plain').send('REFUSE-ME');
        expect(refused.status).toBeGreaterThanOrEqual(500);
        expect(refused.headers['content-type']).toMatch(/problem\+json/);
        expect((await alice.getOrder(quiet.order.id)).body).toMatchObject({ status: 'PROCESSING', callbacks: [] });
      } finally {
        await service.prisma.$executeRawUnsafe('DROP TRIGGER refuse_marked_callbacks ON provider_callbacks');
        await service.prisma.$executeRawUnsafe('DROP FUNCTION refuse_marked_callbacks()');
      }
      await request(service.server).post(pathOf(quiet.successUrl)).set('content-type', 'text/plain').send('REFUSE-ME').expect(200);
      expect((await alice.getOrder(quiet.order.id)).body.status).toBe('SUCCEEDED');
    });

    it('a body PostgreSQL text cannot hold (a NUL character) is stored readably, not refused forever', async () => {
      const alice = await customer(service);
      const quiet = await quietOrder(alice);
      const res = await request(service.server).post(pathOf(quiet.successUrl)).set('content-type', 'text/plain').send('PAID\u0000ref');
      expect(res.status).toBe(200);
      const stored = await service.prisma.providerCallback.findUniqueOrThrow({ where: { id: res.body.callbackId } });
      expect(stored.rawBody).toBe('PAID\uFFFDref');
    });
  });

  it('20 concurrent duplicate success callbacks: one transition, the rest DUPLICATE', async () => {
    const alice = await customer(service);
    const quiet = await quietOrder(alice);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => request(service.server).post(pathOf(quiet.successUrl)).send({ status: 'SUCCESS' })),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const stored = await service.prisma.providerCallback.findMany({ where: { orderId: quiet.order.id } });
    expect(stored.filter((c) => c.result === 'APPLIED')).toHaveLength(1);
    expect(stored.filter((c) => c.result === 'DUPLICATE')).toHaveLength(19);
    const history = await service.prisma.orderStatusChange.findMany({ where: { orderId: quiet.order.id, toStatus: 'SUCCEEDED' } });
    expect(history).toHaveLength(1);
  });

  it('a failure callback after a provider rejection is a duplicate; a success is a conflict', async () => {
    const alice = await customer(service);
    const res = await alice.createOrder({ wallet: TEST_WALLETS.INSUFFICIENT_FUNDS });
    const urls = service.get(CallbackUrlsService).urlsFor(res.body.id);
    await request(service.server).post(pathOf(urls.failureUrl)).send({}).expect(200);
    await request(service.server).post(pathOf(urls.successUrl)).send({}).expect(200);
    const order = (await alice.getOrder(res.body.id)).body;
    expect(order).toMatchObject({ status: 'FAILED', needsReview: true });
    expect(order.callbacks.map((c: { result: string }) => c.result)).toEqual(['DUPLICATE', 'CONFLICT']);
  });

  describe('idempotency of POST /v1/orders', () => {
    it('10 concurrent requests with one key: exactly one provider call, one order', async () => {
      const alice = await customer(service);
      const key = randomUUID();
      const before = payinRequests().length;
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK, description: 'once' }, key)),
      );
      expect(payinRequests().length - before).toBe(1);
      const created = answers.filter((a) => a.status === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
      for (const a of answers.filter((x) => x.status !== 201)) expect(a.body.code).toBe('idempotency_in_progress');
      expect(await service.prisma.order.count({ where: { customerId: alice.sub } })).toBe(1);
    });

    it('a retry replays the first answer; another body with the same key is 422', async () => {
      const alice = await customer(service);
      const key = randomUUID();
      const first = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK }, key);
      const again = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK }, key);
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      const other = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK, amount: '9999' }, key);
      expect(other.status).toBe(422);
      expect(other.body.code).toBe('idempotency_key_reused');
    });

    it('requires the Idempotency-Key header', async () => {
      const alice = await customer(service);
      const res = await request(service.server).post('/v1/orders').auth(alice.token, { type: 'bearer' }).send({});
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('idempotency_key_required');
    });
  });

  describe('invalid input: 400 problem+json listing the fields, no provider call', () => {
    it.each([
      ['zero', { amount: '0' }, ['amount']],
      ['negative', { amount: -5 }, ['amount']],
      ['too many decimals for XAF', { amount: '1500.5', currency: 'XAF' }, ['amount']],
      ['too many decimals for EUR', { amount: '12.345', currency: 'EUR' }, ['amount']],
      ['non-numeric', { amount: 'ten' }, ['amount']],
      ['above the maximum', { amount: '100000000000' }, ['amount']],
      ['an unknown currency', { currency: 'GBP' }, ['currency']],
      ['a bad email', { payerEmail: 'not-an-email' }, ['payerEmail']],
      ['an unknown field', { tip: 5 }, ['tip']],
      ['a missing field', { wallet: undefined }, ['wallet']],
      ['a service that is not an integer', { service: '1' }, ['service']],
    ])('%s', async (_name, overrides, fields) => {
      const alice = await customer(service);
      const before = payinRequests().length;
      const res = await alice.createOrder(overrides);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(expect.arrayContaining(fields));
      expect(payinRequests().length).toBe(before);
      expect(await service.prisma.order.count({ where: { customerId: alice.sub } })).toBe(0);
    });

    it('accepts an EUR amount given as a number and answers it as a decimal string', async () => {
      const alice = await customer(service);
      const res = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK, amount: 12.5, currency: 'EUR' });
      expect(res.status).toBe(201);
      expect(res.body.amount).toBe('12.50');
      const sent = payinRequests().at(-1)!;
      expect((sent.body as { amount: unknown }).amount).toBe(12.5);
    });
  });

  describe('who sees what', () => {
    it('another customer gets 404; finance reads all; nobody without a token gets in', async () => {
      const alice = await customer(service);
      const bob = await customer(service);
      const finance = await customer(service, 'fin-2', 'finance');
      const order = (await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK })).body;
      expect((await bob.getOrder(order.id)).status).toBe(404);
      expect((await bob.events(order.id)).status).toBe(404);
      expect((await finance.getOrder(order.id)).status).toBe(200);
      expect((await request(service.server).get(`/v1/orders/${order.id}`)).status).toBe(401);
      expect((await bob.listOrders()).body.items.map((o: { id: string }) => o.id)).not.toContain(order.id);
    });

    it('finance moves no money: creating an order is 403', async () => {
      const finance = await customer(service, 'fin-3', 'finance');
      expect((await finance.createOrder()).status).toBe(403);
    });

    it('lists newest first with filters and cursor pagination', async () => {
      const carol = await customer(service);
      const ids: string[] = [];
      for (const currency of ['XAF', 'EUR', 'XAF'])
        ids.push((await carol.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK, currency, amount: '10' })).body.id);
      const page1 = await carol.listOrders({ limit: '2' });
      expect(page1.body.items.map((o: { id: string }) => o.id)).toEqual([ids[2], ids[1]]);
      const page2 = await carol.listOrders({ limit: '2', cursor: page1.body.nextCursor });
      expect(page2.body).toEqual({ items: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
      const xaf = await carol.listOrders({ currency: 'XAF' });
      expect(xaf.body.items.map((o: { id: string }) => o.id)).toEqual([ids[2], ids[0]]);
      const processing = await carol.listOrders({ status: 'PROCESSING', from: new Date(Date.now() - 60_000).toISOString() });
      expect(processing.body.items).toHaveLength(3);
      expect((await carol.listOrders({ status: 'DONE' })).status).toBe(400);
      expect((await carol.listOrders({ cursor: 'garbage' })).status).toBe(400);
      expect((await carol.listOrders({ limit: '201' })).body.errors).toEqual([expect.objectContaining({ field: 'limit' })]);
    });

    it('finance reads the stored callbacks', async () => {
      const finance = await customer(service, 'fin-4', 'finance');
      const res = await request(service.server)
        .get('/v1/callbacks')
        .query({ result: 'REJECTED', limit: '5' })
        .auth(finance.token, { type: 'bearer' });
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeGreaterThan(0);
      expect(res.body.items.every((c: { result: string }) => c.result === 'REJECTED')).toBe(true);
      const alice = await customer(service);
      expect((await request(service.server).get('/v1/callbacks').auth(alice.token, { type: 'bearer' })).status).toBe(403);
    });
  });

  it('SSE delivers a transition whose callback landed on another instance', async () => {
    const other = await startTestService(sandbox);
    try {
      const alice = await customer(service);
      const quiet = await quietOrder(alice);
      const streaming = alice.events(quiet.order.id).then((r) => r);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await request(other.server).post(pathOf(quiet.successUrl)).send({}).expect(200);
      const events = parseSse((await streaming).text);
      expect(events.map((e) => e.data.status)).toEqual(['PROCESSING', 'SUCCEEDED']);
    } finally {
      await other.close();
    }
  });
  void usingRealPostgres;
  void waitForOrder;
});
