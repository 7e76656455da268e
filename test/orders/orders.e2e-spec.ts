import request from 'supertest';
import { OrderExpiryJob } from '../../src/orders/order-expiry.job';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer, parseSse, waitForOrder } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { ProviderCallLog } from '../../src/provider/provider-call-log';

describe('pay-in orders end to end', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  const payinRequests = () => sandbox.state.requests.filter((r) => r.path === '/api/agent/bills/v3');

  beforeAll(async () => {
    sandbox = await startTestSandbox({ callbackDelayMs: 150, hangMs: 1500 });
    service = await startTestService(sandbox, { PROVIDER_TIMEOUT_MS: '500' }, [], { listen: true });
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  it('success wallet: 201 PROCESSING, then the success callback makes it SUCCEEDED', async () => {
    const alice = await customer(service);
    const res = await alice.createOrder({ wallet: TEST_WALLETS.SUCCESS, amount: 2500, currency: 'XAF' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'PROCESSING', amount: '2500', currency: 'XAF', failureReason: null, needsReview: false });
    expect(res.body.providerReference).toMatch(/\S+/);
    const sent = payinRequests().find((r) => (r.body as { order_id?: string }).order_id === res.body.reference)!;
    expect(sent.body).toMatchObject({ amount: 2500, currency: 'XAF', wallet: TEST_WALLETS.SUCCESS, payerEmail: 'awa@example.com' });
    expect((sent.body as { successUrl: string }).successUrl).toMatch(new RegExp(`/v1/callbacks/payin/${res.body.id}/success\\?token=`));
    expect(sent.headers).toMatchObject({ operation: '2', service: '1' });

    const done = await waitForOrder(service, alice.token, res.body.id, (o) => o.status === 'SUCCEEDED');
    expect(done.history.map((h: { status: string }) => h.status)).toEqual(['PENDING', 'PROCESSING', 'SUCCEEDED']);
    expect(done.callbacks).toEqual([expect.objectContaining({ outcome: 'success', result: 'APPLIED' })]);
  });

  it('forwards the otp as the otp header, digits as given, and stores it nowhere', async () => {
    const alice = await customer(service);
    const res = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK, otp: '012345' });
    expect(res.status).toBe(201);
    const sent = payinRequests().find((r) => (r.body as { order_id?: string }).order_id === res.body.reference)!;
    expect(sent.headers.otp).toBe('012345');
    expect(sent.body).not.toHaveProperty('otp');
    expect(JSON.stringify(res.body)).not.toContain('012345');
    const row = await service.prisma.order.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(JSON.stringify(row)).not.toContain('012345');
    // This order's call only: the run's other pay-ins carry random references that may hold those digits.
    await service.get(ProviderCallLog).flush();
    const logged = (await service.prisma.providerCall.findMany({ where: { endpoint: 'payin.collect' } })).filter((call) =>
      JSON.stringify(call.requestBody).includes(res.body.reference),
    );
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(logged)).not.toContain('012345');
  });

  it('failure wallet: PROCESSING, then the failure callback makes it FAILED', async () => {
    const alice = await customer(service);
    const res = await alice.createOrder({ wallet: TEST_WALLETS.FAILURE });
    expect(res.body.status).toBe('PROCESSING');
    const done = await waitForOrder(service, alice.token, res.body.id, (o) => o.status === 'FAILED');
    expect(done.failureReason).toMatch(/failed/i);
  });

  it('rejected wallet: 201 FAILED with the provider’s reason, no callback expected', async () => {
    const alice = await customer(service);
    const res = await alice.createOrder({ wallet: TEST_WALLETS.INSUFFICIENT_FUNDS });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'FAILED', failureReason: 'Insufficient funds' });
  });

  it('500 from the provider: UNKNOWN, never FAILED', async () => {
    const alice = await customer(service);
    const res = await alice.createOrder({ wallet: TEST_WALLETS.SERVER_ERROR });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('UNKNOWN');
  });

  it('timeout: UNKNOWN, and a late success callback still decides it', async () => {
    const alice = await customer(service);
    const res = await alice.createOrder({ wallet: TEST_WALLETS.TIMEOUT });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('UNKNOWN');
    const decided = await waitForOrder(service, alice.token, res.body.id, (o) => o.status === 'SUCCEEDED');
    expect(decided.history.map((h: { status: string }) => h.status)).toEqual(['PENDING', 'UNKNOWN', 'SUCCEEDED']);
    expect(payinRequests().filter((r) => (r.body as { order_id?: string }).order_id === res.body.reference)).toHaveLength(1);
  });

  it('duplicate delivery: the second success callback is recorded as DUPLICATE', async () => {
    const alice = await customer(service);
    const res = await alice.createOrder({ wallet: TEST_WALLETS.DUPLICATE_CALLBACK });
    const done = await waitForOrder(service, alice.token, res.body.id, (o) => (o.callbacks as unknown[]).length === 2);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.callbacks.map((c: { result: string }) => c.result)).toEqual(['APPLIED', 'DUPLICATE']);
    expect(done.history).toHaveLength(3);
  });

  it('success then failure: stays SUCCEEDED, the contradiction is a CONFLICT and the order needs review', async () => {
    const alice = await customer(service);
    const res = await alice.createOrder({ wallet: TEST_WALLETS.CONFLICTING_CALLBACKS });
    const done = await waitForOrder(service, alice.token, res.body.id, (o) => o.needsReview === true);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.callbacks.map((c: { result: string }) => c.result)).toEqual(['APPLIED', 'CONFLICT']);
  });

  it('Server-Sent Events: the current status, each transition, and the end after a final one', async () => {
    const alice = await customer(service);
    const res = await alice.createOrder({ wallet: TEST_WALLETS.SUCCESS });
    const stream = await alice.events(res.body.id);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseSse(stream.text);
    expect(events.every((e) => e.event === 'status')).toBe(true);
    expect(events[events.length - 1].data).toMatchObject({ orderId: res.body.id, status: 'SUCCEEDED', reason: 'callback_success' });
    const ids = events.map((e) => Number(e.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('Server-Sent Events of a finished order: one event, then the end', async () => {
    const alice = await customer(service);
    const res = await alice.createOrder({ wallet: TEST_WALLETS.INSUFFICIENT_FUNDS });
    const events = parseSse((await alice.events(res.body.id)).text);
    expect(events).toHaveLength(1);
    expect(events[0].data.status).toBe('FAILED');
  });

  it('expiry: PROCESSING past ORDER_EXPIRY_MINUTES becomes EXPIRED; a late callback still decides it', async () => {
    const alice = await customer(service);
    const res = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK });
    expect(res.body.status).toBe('PROCESSING');
    await service.prisma.$executeRaw`UPDATE orders SET processing_since = now() - interval '2 days' WHERE id = ${res.body.id}::uuid`;
    expect(await service.get(OrderExpiryJob).sweepNow()).toBeGreaterThanOrEqual(1);
    const expired = await waitForOrder(service, alice.token, res.body.id, () => true);
    expect(expired.status).toBe('EXPIRED');

    const order = await service.prisma.order.findUniqueOrThrow({ where: { id: res.body.id } });
    const payin = sandbox.state.requests.find((r) => (r.body as { order_id?: string }).order_id === order.reference)!;
    const successUrl = (payin.body as { successUrl: string }).successUrl;
    const late = await request(service.server)
      .post(new URL(successUrl).pathname + new URL(successUrl).search)
      .send({ status: 'SUCCESS' });
    expect(late.status).toBe(200);
    const decided = await waitForOrder(service, alice.token, res.body.id, () => true);
    expect(decided.status).toBe('SUCCEEDED');
    expect(decided.history.map((h: { status: string }) => h.status)).toEqual(['PENDING', 'PROCESSING', 'EXPIRED', 'SUCCEEDED']);
  });

  it('a crash between the provider call and the final write leaves the order visible, then UNKNOWN', async () => {
    const order = await service.prisma.order.create({
      data: {
        reference: `ord_crash_${Date.now()}`,
        customerId: 'crashed-customer',
        amount: '700',
        currency: 'XAF',
        service: 1,
        wallet: TEST_WALLETS.SUCCESS,
        description: 'interrupted',
        payer: 'X',
        payerEmail: 'x@example.com',
        submittedAt: new Date(Date.now() - 10 * 60_000),
      },
    });
    const finance = await customer(service, 'fin-1', 'finance');
    expect((await finance.getOrder(order.id)).body.status).toBe('PENDING');
    await service.get(OrderExpiryJob).sweepNow();
    const after = (await finance.getOrder(order.id)).body;
    expect(after.status).toBe('UNKNOWN');
    expect(after.history.at(-1)).toMatchObject({ reason: 'submission_interrupted', status: 'UNKNOWN' });
  });
});
