import { get } from 'node:http';
import type { Pool } from 'pg';
import { DATABASE_POOL_SIZE } from '../../src/database/database';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { insertFixtureOrders } from '../support/fixture-orders';
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
 * the pool (loops reading pages of its 60,000 orders, pay-ins hanging on the provider) only queues
 * beside the others: the pool serves its waiters in turn, and another customer's reads and pay-in
 * are answered as fast as the saturating customer's own, within 2 s.
 */
describe('one party saturating the database pool keeps no other party waiting', () => {
  const BULK_ORDERS = 60_000;
  const READERS = 20;
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
    await insertFixtureOrders(
      service.prisma,
      (tx) => tx.$executeRaw`
        INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email, created_at, updated_at)
        SELECT gen_random_uuid(), 'ord_pool_' || g, ${mallory.sub}, 'SUCCEEDED', 1000 + g, 'XAF', 1, '237600000001', 'bulk order ' || g, 'Payer ' || g,
               'bulk@example.com', ${bulkDay}::timestamptz + make_interval(secs => g), now()
        FROM generate_series(1, ${BULK_ORDERS}::int) AS g`,
    );
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
    // Warm: the first use of a route compiles its code and prepares its statements, which is no one's fairness.
    await bob.getOrder(bobsOrder);
    await bob.listOrders();

    let waitingPeak = 0;
    let inUsePeak = 0;
    const sample = () => {
      waitingPeak = Math.max(waitingPeak, pool.waitingCount);
      inUsePeak = Math.max(inUsePeak, pool.totalCount - pool.idleCount);
    };
    // PGlite runs one statement at a time: the flood holds every connection with requests queued for
    // them. On PostgreSQL the service's own CPU runs out first (see the expectations below).
    const saturated = () =>
      process.env.TEST_DATABASE_URL ? inUsePeak >= DATABASE_POOL_SIZE / 2 : inUsePeak === DATABASE_POOL_SIZE && waitingPeak > 0;
    // At every checkout, not only every 2 ms: on a loaded machine a timer missed the moment all ten were out (9 seen).
    pool.on('acquire', sample);
    const sampler = setInterval(sample, 2);
    // The saturating customer: READERS loops reading pages of its orders back to back, and pay-ins hanging on the provider.
    let flooding = true;
    const readerStatuses: number[] = [];
    const readerMs: number[] = [];
    const flood = Promise.all([
      ...Array.from({ length: READERS }, async () => {
        while (flooding) {
          const started = performance.now();
          readerStatuses.push(await statusOf(port, '/v1/orders?limit=20&currency=EUR', mallory.token));
          readerMs.push(performance.now() - started);
        }
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
      // Measured once the flood is under way (every reader looping, every pay-in waiting on the
      // provider) and has filled the pool: on a loaded machine 300 ms were once not enough (8 of 10).
      const floodStarted = performance.now();
      while (performance.now() - floodStarted < 300 || (!saturated() && performance.now() - floodStarted < 10_000)) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
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
      pool.off('acquire', sample);
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const othersMs = timings.map((t) => t.ms);
    process.stdout.write(
      `database pool: ${inUsePeak} in use, up to ${waitingPeak} waiting; the saturating customer's median answer ${Math.round(median(readerMs))} ms, ` +
        `the other customer's ${Math.round(median(othersMs))} ms (slowest ${Math.round(Math.max(...othersMs))} ms)\n`,
    );
    // The saturating customer was served too. On PGlite, which runs one statement at a time, it held
    // every connection of the pool with requests queued for them. On PostgreSQL the service's own CPU
    // runs out first: in npm test's parallel workers its peak read 8 to 10 of the 10 connections, so
    // there at least half of the pool, held by one customer, is what this test asks of the flood.
    expect(new Set(readerStatuses)).toEqual(new Set([200]));
    // saturated() above is that condition, stated once; the peaks are printed beside it on a failure.
    expect({ inUsePeak, waitingPeak, saturated: saturated() }).toEqual({ inUsePeak, waitingPeak, saturated: true });
    // Every request of the other customer answered (none gave up waiting for a connection: 503 after 10 s) ...
    expect(timings.filter((t) => t.status !== (t.what === 'pay-in' ? 201 : 200))).toEqual([]);
    // ... in its turn: no slower than the saturating customer's own requests (the pool serves its
    // waiters in order; nothing holds a connection while it waits), and within 2 s. The median: on
    // a loaded machine a single answer may wait for the CPU, which this test does not measure.
    expect(median(othersMs)).toBeLessThan(Math.max(2 * median(readerMs), 100));
    expect(median(othersMs)).toBeLessThan(SERVED_WITHIN_MS);
  }, 60_000);
});
