import { firstValueFrom, filter, timeout } from 'rxjs';
import request from 'supertest';
import { CallbackUrlsService } from '../../src/orders/callback-urls.service';
import { OrderEventsService } from '../../src/orders/order-events.service';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer } from '../support/orders-client';
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
