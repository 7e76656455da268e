import { firstValueFrom, filter, timeout } from 'rxjs';
import type { Client } from 'pg';
import request from 'supertest';
import { CallbackUrlsService } from '../../src/orders/callback-urls.service';
import { OrderEventsService } from '../../src/orders/order-events.service';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer, parseSse } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * A transition committed by one instance reaches the event stream of another through PostgreSQL
 * LISTEN/NOTIFY alone (the raw stream has no polling; the SSE route adds a polling safety net on
 * top). Real server only: the embedded PGlite is one session and delivers no NOTIFY across
 * connections.
 */
describe('order events across instances', () => {
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

  async function waitUntil(what: string, predicate: () => boolean, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('a stream learns of a transition committed while its instance had lost the listener, and idles again without queries', async () => {
    const alice = await customer(a);
    const order = (await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK })).body;
    const events = a.get(OrderEventsService);
    await waitUntil('notifications are proven', () => events.notificationsProven);
    const stream = alice.events(order.id).then((res) => res);
    await new Promise((resolve) => setTimeout(resolve, 300));

    // The listening connection dies; the order is decided on B before A listens again.
    const listener = (events as unknown as { client: Client & { processID: number } }).client;
    await b.prisma.$queryRawUnsafe(`SELECT pg_terminate_backend(${listener.processID})`);
    await waitUntil('A knows its listener is lost', () => !events.notificationsProven);
    const url = new URL(b.get(CallbackUrlsService).urlsFor(order.id).successUrl);
    await request(b.server)
      .post(url.pathname + url.search)
      .send({})
      .expect(200);

    const res = await stream;
    expect(parseSse(res.text).map((e) => e.data?.status)).toEqual(['PROCESSING', 'SUCCEEDED']);
    await waitUntil('the new listener is proven', () => events.notificationsProven);
  }, 30_000);

  it('a callback applied on instance B is announced on instance A', async () => {
    const alice = await customer(a);
    const order = (await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK })).body;
    const heard = firstValueFrom(
      a
        .get(OrderEventsService)
        .forOrder(order.id)
        .pipe(
          filter((event) => event.status === 'SUCCEEDED'),
          timeout(5_000),
        ),
    );
    const url = new URL(b.get(CallbackUrlsService).urlsFor(order.id).successUrl);
    await request(b.server)
      .post(url.pathname + url.search)
      .send({})
      .expect(200);
    await expect(heard).resolves.toMatchObject({
      orderId: order.id,
      fromStatus: 'PROCESSING',
      status: 'SUCCEEDED',
      reason: 'callback_success',
    });
  });
});
