import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { mintToken } from '../../src/auth/token-minter';
import { OrdersRepository } from '../../src/orders/orders.repository';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { payinReachesSandbox, startChildService, type ChildService } from '../support/child-service';
import { orderRequest } from '../support/provider-factories';
import { testDatabaseUrl } from '../support/test-database';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

const JWT_SECRET = 'kill-test-jwt-secret-0123456789abcdefghijklmnop';
// Bounds the pay-in, hence the lease of its idempotency record (provider timeout + 5 s).
const CHILD_PROVIDER_TIMEOUT_MS = 2_000;

/** The real entry point (`npm start`'s command) on the test database, as a process of its own. */
async function startChild(sandbox: RunningSandbox): Promise<ChildService> {
  return startChildService({
    DATABASE_URL: testDatabaseUrl(),
    PROVIDER_BASE_URL: sandbox.url,
    PROVIDER_TIMEOUT_MS: String(CHILD_PROVIDER_TIMEOUT_MS),
    AUTH_JWT_SECRET: JWT_SECRET,
    CALLBACK_SIGNING_SECRET: 'test-callback-signing-secret-0123456789abcdef',
    LOG_LEVEL: 'warn',
  });
}

/**
 * kill -9 while a pay-in is in flight: the order is stored and handed to the provider, the
 * process dies before the answer. After a restart and the interrupted-work sweep, a retry with the
 * same Idempotency-Key and body answers that order (UNKNOWN, same id): never a second pay-in,
 * never a key stranded in 409 for 24 h.
 */
describe('kill -9 during a pay-in', () => {
  let sandbox: RunningSandbox;
  let child: ChildProcess | undefined;
  let service: TestService | undefined;

  beforeAll(async () => {
    // The timeout wallet never answers within the pay-in's timeout: the kill lands while it waits.
    sandbox = await startTestSandbox({ hangMs: 60_000 });
  });
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await service?.close();
    await sandbox?.close();
  });

  it('a retry after the restart and the sweep answers the swept order, sent to the provider once', async () => {
    const started = await startChild(sandbox);
    child = started.child;
    const customer = 'cust_kill9';
    const token = await mintToken({ sub: customer, roles: ['customer'], ttl: '1h', secret: JWT_SECRET });
    const key = randomUUID();
    const body = orderRequest({ wallet: TEST_WALLETS.TIMEOUT });

    const payinSent = payinReachesSandbox(sandbox, TEST_WALLETS.TIMEOUT);
    const inFlight = fetch(`${started.base}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(
      (res) => res.status,
      () => 'connection lost' as const,
    );
    const payin = await payinSent;
    const reference = (payin.body as { order_id: string }).order_id;
    const exited = new Promise((done) => child!.once('exit', done));
    child.kill('SIGKILL');
    await exited;
    expect(await inFlight).toBe('connection lost');

    // A new instance on the same database.
    service = await startTestService(sandbox, { AUTH_JWT_SECRET: JWT_SECRET, PROVIDER_TIMEOUT_MS: String(CHILD_PROVIDER_TIMEOUT_MS) });
    const stored = await service.prisma.order.findFirstOrThrow({ where: { reference } });
    expect(stored).toMatchObject({ status: 'PENDING', customerId: customer });
    expect(stored.submittedAt).not.toBeNull();
    const record = await service.prisma.idempotencyRecord.findFirstOrThrow({ where: { key } });
    expect(record).toMatchObject({ state: 'in_progress', resourceType: 'order', resourceId: stored.id });

    // The interrupted-work sweep, its window shortened for the test (production: twice the provider timeout plus a minute).
    await sleep(1_100);
    await service.get(OrdersRepository).sweep(service.config.orderExpiryMinutes, 1);
    expect((await service.prisma.order.findUniqueOrThrow({ where: { id: stored.id } })).status).toBe('UNKNOWN');

    // Retries answer 409 while the dead request's lease runs, then the order.
    const retry = async () =>
      request(service!.server).post('/v1/orders').auth(token, { type: 'bearer' }).set('idempotency-key', key).send(body);
    let answer = await retry();
    const deadline = Date.now() + 30_000;
    while (answer.status === 409 && Date.now() < deadline) answer = await retry();
    expect(answer.status).toBe(201);
    expect(answer.headers['idempotent-replayed']).toBe('true');
    expect(answer.body).toMatchObject({
      id: stored.id,
      reference,
      status: 'UNKNOWN',
      amount: String(body.amount),
      currency: body.currency,
      wallet: TEST_WALLETS.TIMEOUT,
    });
    const again = await retry();
    expect(again.body).toEqual(answer.body);

    expect(
      sandbox.state.requestsTo('/api/agent/bills/v3', 'POST').filter((r) => (r.body as { order_id?: string }).order_id === reference),
    ).toHaveLength(1);
    expect(await service.prisma.order.count({ where: { customerId: customer } })).toBe(1);
  }, 120_000);
});
