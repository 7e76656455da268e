import { get } from 'node:http';
import type { Pool } from 'pg';
import { DATABASE_POOL_SIZE } from '../../src/database/prisma.service';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** Reads a whole answer of `path` with `token`, on a connection of its own; resolves with its status. */
function statusOf(port: number, path: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/**
 * The database pool (DATABASE_POOL_SIZE connections per instance) is shared by every request. A
 * request holds at most one connection at a time, for one statement or one short transaction, and
 * nothing waits on the provider or on a client while it holds one. So one customer that saturates
 * the pool (loops reading pages of its 20,000 orders, pay-ins hanging on the provider) only queues
 * beside the others: the pool serves its waiters in turn, and another customer's reads and pay-in
 * are still served within 2 s.
 */
describe('one party saturating the database pool keeps no other party waiting', () => {
  const BULK_ORDERS = 20_000;
  const READERS = 15;
  const HANGING_PAYINS = 20;
  const SERVED_WITHIN_MS = 2_000;
  const bulkDay = new Date('2033-03-01T00:00:00Z');
  let sandbox: RunningSandbox;
  let service: TestService;
  let mallory: Awaited<ReturnType<typeof customer>>;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    // The hanging pay-ins give up after 3 s: long enough to overlap every measured request.
    service = await startTestService(sandbox, { PROVIDER_TIMEOUT_MS: '3000' }, [], { listen: true });
    mallory = await customer(service);
    await service.prisma.$executeRaw`
      INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email, created_at, updated_at)
      SELECT gen_random_uuid(), 'ord_pool_' || g, ${mallory.sub}, 'SUCCEEDED', 1000 + g, 'XAF', 1, '237600000001', 'bulk order ' || g, 'Payer ' || g,
             'bulk@example.com', ${bulkDay}::timestamptz + make_interval(secs => g), now()
      FROM generate_series(1, ${BULK_ORDERS}::int) AS g`;
  }, 60_000);
  afterAll(async () => {
    await service.prisma.$executeRaw`DELETE FROM orders WHERE customer_id = ${mallory.sub}`;
    await service.close();
    await sandbox.close();
  });

  it('page reads and hanging pay-ins of one customer fill the pool; another customer is served within 2 s throughout', async () => {
    const port = service.config.port;
    const pool = (service.prisma as unknown as { pool: Pool }).pool;
    const bob = await customer(service);
    const bobsOrder = (await bob.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK })).body.id as string;

    let waitingPeak = 0;
    let inUsePeak = 0;
    const sampler = setInterval(() => {
      waitingPeak = Math.max(waitingPeak, pool.waitingCount);
      inUsePeak = Math.max(inUsePeak, pool.totalCount - pool.idleCount);
    }, 2);
    // The saturating customer: READERS loops reading pages of its orders back to back, and pay-ins hanging on the provider.
    let flooding = true;
    const readerStatuses: number[] = [];
    const flood = Promise.all([
      ...Array.from({ length: READERS }, async () => {
        while (flooding) readerStatuses.push(await statusOf(port, '/v1/orders?limit=20', mallory.token));
      }),
      ...Array.from({ length: HANGING_PAYINS }, () => mallory.createOrder({ wallet: TEST_WALLETS.TIMEOUT })),
    ]);
    const timings: { what: string; status: number; ms: number }[] = [];
    const timed = async (what: string, call: () => Promise<{ status: number }>) => {
      const started = performance.now();
      const { status } = await call();
      timings.push({ what, status, ms: performance.now() - started });
    };
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (let i = 0; i < 10; i++) {
        await timed('read', () => bob.getOrder(bobsOrder));
        await timed('list', () => bob.listOrders());
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await timed('pay-in', () => bob.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK }));
    } finally {
      flooding = false;
      await flood;
      clearInterval(sampler);
    }
    process.stdout.write(
      `database pool: ${inUsePeak} in use, up to ${waitingPeak} waiting; the other customer's answers in ms ${JSON.stringify(timings.map((t) => Math.round(t.ms)))}\n`,
    );
    // The saturating customer was served too, and the pool was full with requests queued for it.
    expect(new Set(readerStatuses)).toEqual(new Set([200]));
    expect(inUsePeak).toBe(DATABASE_POOL_SIZE);
    expect(waitingPeak).toBeGreaterThan(0);
    // Every request of the other customer answered in time (the list of those that were not, when any).
    const late = timings.filter((t) => t.ms >= SERVED_WITHIN_MS || t.status !== (t.what === 'pay-in' ? 201 : 200));
    expect(late).toEqual([]);
  }, 60_000);
});
