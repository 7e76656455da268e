import { get } from 'node:http';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { insertFixtureOrders } from '../support/fixture-orders';
import { settledHeap } from '../support/settled-heap';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * `GET /v1/orders/export.csv` streams batch by batch: the heap of the instance stays flat however
 * many orders the range holds. Live heap after forced collections, sampled while 100,000 orders
 * (more than 10 MB of CSV) are read: a measurement, so in the perf tier. That every order is
 * exported once and in order, across batches, is held by test/finance/finance.e2e-spec.ts.
 */
describe('the CSV export of 100,000 orders', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let financeToken: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, {}, [], { listen: true });
    financeToken = await service.bearer('fin-export-memory', 'finance');
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  it('streams with flat memory', async () => {
    const bulkDay = new Date('2032-01-01T00:00:00Z');
    await insertFixtureOrders(
      service.prisma,
      (tx) => tx.$executeRaw`
        INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email, created_at, updated_at)
        SELECT gen_random_uuid(), 'ord_bulk_' || g, 'bulk', 'SUCCEEDED', 1000 + g, 'XAF', 1, '237600000001', 'bulk order ' || g, 'Payer ' || g, 'bulk@example.com',
               ${bulkDay}::timestamptz + make_interval(secs => g), now()
        FROM generate_series(1, 100000) AS g`,
    );
    try {
      const before = settledHeap();
      let peak = before;
      let nextSample = 0;
      let bytes = 0;
      let newlines = 0;
      const url = `http://127.0.0.1:${service.config.port}/v1/orders/export.csv?from=${encodeURIComponent(bulkDay.toISOString())}&to=2032-01-03T00:00:00Z`;
      await new Promise<void>((resolve, reject) => {
        get(url, { headers: { authorization: `Bearer ${financeToken}` } }, (res) => {
          expect(res.statusCode).toBe(200);
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            for (const byte of chunk) if (byte === 10) newlines++;
            if (bytes >= nextSample) {
              nextSample += 2_000_000;
              peak = Math.max(peak, settledHeap());
            }
          });
          res.on('end', resolve);
          res.on('error', reject);
        }).on('error', reject);
      });
      expect(newlines).toBe(100_001);
      expect(bytes).toBeGreaterThan(10_000_000);
      expect(peak - before).toBeLessThan(50 * 1024 * 1024);
    } finally {
      await service.prisma.$executeRaw`DELETE FROM orders WHERE customer_id = 'bulk'`;
    }
  }, 120_000);
});
