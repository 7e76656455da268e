import request from 'supertest';
import { OrderEventsService } from '../../src/orders/order-events.service';
import { CallbackUrlsService } from '../../src/orders/callback-urls.service';
import { OrdersRepository } from '../../src/orders/orders.repository';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer, parseSse } from '../support/orders-client';
import { usingRealPostgres } from '../support/test-database';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * Streams on instance A watch three orders; instance B decides them. On the embedded database
 * (no NOTIFY across connections) only A's shared catch-up can tell A's streams, in one query per
 * tick for all watched orders, never one per stream. On PostgreSQL the notifications are proven
 * to arrive (A's probe came back), so idle streams cause no catch-up at all. Either way each
 * stream sees each status once.
 */
async function waitUntilProven(events: OrderEventsService) {
  const deadline = Date.now() + 5_000;
  while (!events.notificationsProven) {
    if (Date.now() > deadline) throw new Error('the notification probe never came back');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the shared catch-up of live streams', () => {
  let sandbox: RunningSandbox;
  let a: TestService;
  let b: TestService;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    [a, b] = await Promise.all([startTestService(sandbox), startTestService(sandbox)]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await sandbox.close();
  });

  it('delivers transitions made on another instance to every stream, once, with one query for all watched orders', async () => {
    const alice = await customer(a);
    const orders = [];
    for (let i = 0; i < 3; i++)
      orders.push((await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK })).body as { id: string; status: string });
    expect(orders.map((o) => o.status)).toEqual(['PROCESSING', 'PROCESSING', 'PROCESSING']);

    if (usingRealPostgres()) await waitUntilProven(a.get(OrderEventsService));
    const repository = a.get(OrdersRepository);
    const catchUps = jest.spyOn(repository, 'changesAfter');
    const historyReads = jest.spyOn(repository, 'history');
    try {
      // Two streams per order: six streams, three watched orders.
      const streams = orders.flatMap((order) => [0, 1].map(() => alice.events(order.id).then((res) => res)));
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      // Idle: the six streams read their snapshots once each, then share the catch-up.
      expect(historyReads).toHaveBeenCalledTimes(6);
      if (usingRealPostgres()) expect(catchUps).not.toHaveBeenCalled();
      else expect(catchUps.mock.calls.length).toBeGreaterThan(0);
      expect(catchUps.mock.calls.length).toBeLessThanOrEqual(4);
      for (const [positions] of catchUps.mock.calls.slice(-1)) {
        expect(positions.map((p) => p.orderId).sort()).toEqual(orders.map((o) => o.id).sort());
      }

      const callbacks = b.get(CallbackUrlsService);
      for (const order of orders) {
        const url = new URL(callbacks.urlsFor(order.id).successUrl);
        await request(b.server)
          .post(url.pathname + url.search)
          .send({})
          .expect(200);
      }
      for (const res of await Promise.all(streams)) {
        expect(res.status).toBe(200);
        const events = parseSse(res.text).filter((e) => e.event === 'status');
        expect(events.map((e) => e.data.status)).toEqual(['PROCESSING', 'SUCCEEDED']);
      }
      expect(historyReads).toHaveBeenCalledTimes(6);
    } finally {
      catchUps.mockRestore();
      historyReads.mockRestore();
    }
  }, 30_000);
});
