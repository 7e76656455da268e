import request from 'supertest';
import { EXPORT_BATCH_SIZE } from '../../src/orders/orders.service';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { insertFixtureOrders } from '../support/fixture-orders';
import { customer } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** Orders inserted straight into the table, as many as a test needs, in a window no other test uses. */
async function seedOrders(
  service: TestService,
  rows: { status: string; currency: string; amount: string; payer?: string; description?: string; needsReview?: boolean }[],
  at: Date,
) {
  for (const [i, row] of rows.entries()) {
    await service.prisma.order.create({
      data: {
        reference: `ord_seed_${at.getTime()}_${i}`,
        customerId: 'seeded',
        status: row.status as never,
        amount: row.amount,
        currency: row.currency,
        service: 1,
        wallet: '237600000006',
        description: row.description ?? 'seeded',
        payer: row.payer ?? 'Seed',
        payerEmail: 'seed@example.com',
        needsReview: row.needsReview ?? false,
        createdAt: new Date(at.getTime() + i),
      },
    });
  }
}

describe('finance views', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let financeToken: string;
  const window = { from: new Date('2031-03-01T00:00:00Z'), to: new Date('2031-03-02T00:00:00Z') };

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, {}, [], { listen: true });
    financeToken = await service.bearer('fin-reports', 'finance');
    await seedOrders(
      service,
      [
        { status: 'SUCCEEDED', currency: 'XAF', amount: '1500' },
        { status: 'SUCCEEDED', currency: 'XAF', amount: '2500' },
        { status: 'SUCCEEDED', currency: 'EUR', amount: '0.10' },
        { status: 'SUCCEEDED', currency: 'EUR', amount: '0.20' },
        { status: 'FAILED', currency: 'EUR', amount: '19.99' },
        { status: 'PROCESSING', currency: 'XAF', amount: '700', needsReview: true },
        { status: 'SUCCEEDED', currency: 'EUR', amount: '1.00', payer: '=HYPERLINK("http://evil")', description: 'Two, "quoted"\nlines' },
      ],
      new Date(window.from.getTime() + 3_600_000),
    );
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  const asFinance = (path: string) => request(service.server).get(path).auth(financeToken, { type: 'bearer' });

  it('summary: count and exact total per status and currency', async () => {
    const res = await asFinance('/v1/reports/summary').query({ from: window.from.toISOString(), to: window.to.toISOString() }).expect(200);
    expect(res.body.lines).toEqual(
      [
        { status: 'SUCCEEDED', currency: 'EUR', count: 3, total: '1.30' },
        { status: 'FAILED', currency: 'EUR', count: 1, total: '19.99' },
        { status: 'SUCCEEDED', currency: 'XAF', count: 2, total: '4000' },
        { status: 'PROCESSING', currency: 'XAF', count: 1, total: '700' },
      ].sort((a, b) => a.currency.localeCompare(b.currency) || a.status.localeCompare(b.status)),
    );
  });

  it('summary and export are for finance: a customer gets 403', async () => {
    const alice = await customer(service);
    await request(service.server).get('/v1/reports/summary').auth(alice.token, { type: 'bearer' }).expect(403);
    await request(service.server).get('/v1/orders/export.csv').auth(alice.token, { type: 'bearer' }).expect(403);
    await request(service.server).get('/v1/reports/summary').expect(401);
  });

  it('exports the filtered orders as RFC 4180 CSV with formulas neutralised', async () => {
    const res = await asFinance('/v1/orders/export.csv')
      .query({ from: window.from.toISOString(), to: window.to.toISOString(), currency: 'EUR' })
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toMatch(/attachment; filename="orders-.*\.csv"/);
    const lines = res.text.split('\r\n');
    // Excel-ready by default: the UTF-8 byte order mark first.
    expect(lines[0]).toBe(
      '\uFEFFid,reference,createdAt,updatedAt,status,amount,currency,service,wallet,payer,payerEmail,description,providerReference,providerTransactionReference,failureReason,needsReview',
    );
    expect(res.text).toContain(`"'=HYPERLINK(""http://evil"")"`);
    expect(res.text).toContain('"Two, ""quoted""\nlines"');
    expect(res.text.match(/,EUR,/g)).toHaveLength(4);
    expect(res.text).toContain(',0.10,EUR,');
  });

  it('filters orders that need review, in the list and the export', async () => {
    const list = await asFinance('/v1/orders')
      .query({ needsReview: 'true', from: window.from.toISOString(), to: window.to.toISOString() })
      .expect(200);
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0]).toMatchObject({ status: 'PROCESSING', needsReview: true });
    const csv = await asFinance('/v1/orders/export.csv')
      .query({ needsReview: 'true', from: window.from.toISOString(), to: window.to.toISOString() })
      .expect(200);
    expect(csv.text.trim().split('\r\n')).toHaveLength(2);
  });

  it('lists callbacks by outcome and result for finance', async () => {
    const alice = await customer(service);
    const order = (await alice.createOrder({ wallet: TEST_WALLETS.FAILURE })).body;
    for (let i = 0; i < 100 && (await service.prisma.providerCallback.count({ where: { orderId: order.id } })) === 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    const res = await asFinance('/v1/callbacks').query({ orderId: order.id, outcome: 'failure' }).expect(200);
    expect(res.body.items).toEqual([expect.objectContaining({ orderId: order.id, outcome: 'failure', result: 'APPLIED' })]);
    expect((await asFinance('/v1/callbacks').query({ orderId: order.id, outcome: 'success' })).body.items).toEqual([]);
  });

  it('exports every order once and in order across batches, equal creation times included', async () => {
    // Groups of orders sharing one creation time, each larger than half a batch: batches end inside a group.
    const day = new Date('2033-01-01T00:00:00Z');
    const total = 2 * EXPORT_BATCH_SIZE + 1_000;
    const tied = Math.ceil(EXPORT_BATCH_SIZE * 0.6);
    await insertFixtureOrders(
      service.prisma,
      (tx) => tx.$executeRaw`
        INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email, created_at, updated_at)
        SELECT gen_random_uuid(), 'ord_tied_' || g, 'tied', 'SUCCEEDED', 1000 + g, 'XAF', 1, '237600000001', 'tied order ' || g, 'Payer', 'tied@example.com',
               ${day}::timestamptz + make_interval(secs => g / ${tied}::int), now()
        FROM generate_series(0, ${total}::int - 1) AS g`,
    );
    const expected = await service.prisma.$queryRaw<{ id: string; reference: string; createdAt: Date }[]>`
      SELECT id::text, reference, created_at AS "createdAt" FROM orders WHERE customer_id = 'tied' ORDER BY created_at DESC, id DESC`;
    const res = await asFinance('/v1/orders/export.csv')
      .query({ from: day.toISOString(), to: new Date(day.getTime() + 86_400_000).toISOString() })
      .expect(200);
    const rows = res.text.split('\r\n').slice(1, -1);
    expect(rows).toHaveLength(total);
    expect(rows.map((row) => row.split(',', 3).join(' '))).toEqual(
      expected.map((o) => `${o.id} ${o.reference} ${o.createdAt.toISOString()}`),
    );
    await service.prisma.$executeRaw`DELETE FROM orders WHERE customer_id = 'tied'`;
  }, 60_000);
});
