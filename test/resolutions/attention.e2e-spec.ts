import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { OrderExpiryJob } from '../../src/orders/order-expiry.job';
import { ORDER_STATUSES } from '../../src/orders/order.types';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, userWithCard } from '../support/cards-factories';
import { customer } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { adminCalls, orderMaker, providerCallback } from './support';

type PlanNode = { 'Node Type': string; Plans?: PlanNode[] };
const nodeTypes = (node: PlanNode): string[] => [node['Node Type'], ...(node.Plans ?? []).flatMap(nodeTypes)];

describe('GET /v1/reports/attention: what waits for a person', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let finance: ReturnType<typeof adminCalls>;
  let admin: ReturnType<typeof adminCalls>;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    finance = adminCalls(service, await service.bearer('fin', 'finance'));
    admin = adminCalls(service, await service.bearer('boss', 'admin'));
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  /** Older than anything the other test files make: these are the oldest of their queues. */
  const backdate = (table: 'orders' | 'card_operations' | 'distributions', id: string, minutes: number) =>
    service.prisma.$executeRawUnsafe(
      `UPDATE ${table} SET created_at = timestamptz '2000-01-01T00:00:00Z' + make_interval(mins => ${minutes}) WHERE id = '${id}'::uuid`,
    );

  it('counts every queue and lists the oldest first; a resolution takes an item out', async () => {
    // The counts below are deltas over the whole database, and make.expired() runs a full sweep: a
    // PENDING order another test file left behind would be swept to UNKNOWN in the middle of them.
    // Swept here first, every such order is in `before` already.
    await service.prisma.$executeRaw`UPDATE orders SET created_at = now() - interval '1 day' WHERE status = 'PENDING'`;
    await service.get(OrderExpiryJob).sweepNow();
    const before = (await finance.attention()).body;
    const buyer = await customer(service);
    const make = orderMaker(service, buyer);
    const unknownLater = await make.unknown();
    const unknownEarlier = await make.unknown();
    await backdate('orders', unknownLater.id, 2);
    await backdate('orders', unknownEarlier.id, 1);
    const expired = await make.expired();
    await backdate('orders', expired.id, 1);
    const stale = await make.pending(3600);
    await backdate('orders', stale.id, 1);
    const fresh = await make.pending(1);
    const conflicting = await make.unknown();
    await admin.resolveOrder(conflicting.id, { status: 'FAILED', note: 'checked' });
    await providerCallback(service, conflicting.id, 'success');
    await backdate('orders', conflicting.id, 0);

    const cards = await cardsClient(service);
    const { card } = await userWithCard(cards);
    sandbox.state.injectFault({
      path: `/api/action/card/transaction/${card.providerCardId}`,
      status: 500,
      rawBody: 'boom',
      contentType: 'text/plain',
    });
    const operationId = (await cards.withdraw(card.id, '100')).body.operationId as string;
    await backdate('card_operations', operationId, 1);
    sandbox.state.injectFault({ path: '/api/agent/link/init', status: 500, rawBody: 'boom', contentType: 'text/plain' });
    const distribution = await request(service.server)
      .post('/v1/distributions')
      .auth(await service.bearer('boss', 'admin'), { type: 'bearer' })
      .set('Idempotency-Key', randomUUID())
      .send({
        paymentReceiver: 'MAT1',
        paymentId: `pay_${randomUUID()}`,
        amount: '10000',
        currency: 'XAF',
        distribution: [{ matricule: 'MAT2', rate: '50' }],
      });
    expect(distribution.body.status).toBe('UNKNOWN');
    await backdate('distributions', distribution.body.id, 1);

    const res = await finance.attention();
    expect(res.status).toBe(200);
    const report = res.body;
    expect(report.stalePendingAfterSeconds).toBe(70);
    expect(report.orders.unknown.count).toBe(before.orders.unknown.count + 2);
    expect(report.orders.unknown.oldest.slice(0, 2).map((o: { id: string }) => o.id)).toEqual([unknownEarlier.id, unknownLater.id]);
    expect(report.orders.unknown.oldest[0]).toMatchObject({
      status: 'UNKNOWN',
      amount: '1500',
      currency: 'XAF',
      createdAt: '2000-01-01T00:01:00.000Z',
    });
    expect(report.orders.expired.count).toBe(before.orders.expired.count + 1);
    expect(report.orders.expired.oldest[0].id).toBe(expired.id);
    expect(report.orders.stalePending.count).toBe(before.orders.stalePending.count + 1);
    expect(report.orders.stalePending.oldest[0].id).toBe(stale.id);
    expect(report.orders.stalePending.oldest.map((o: { id: string }) => o.id)).not.toContain(fresh.id);
    expect(report.orders.needsReview.count).toBe(before.orders.needsReview.count + 1);
    expect(report.orders.needsReview.oldest[0]).toMatchObject({ id: conflicting.id, status: 'FAILED', needsReview: true });
    expect(report.cardOperations.unknown.count).toBe(before.cardOperations.unknown.count + 1);
    expect(report.cardOperations.unknown.oldest[0]).toMatchObject({
      id: operationId,
      kind: 'WITHDRAW',
      cardId: card.id,
      amount: '100',
      currency: 'XAF',
    });
    expect(report.distributions.unknown.count).toBe(before.distributions.unknown.count + 1);
    expect(report.distributions.unknown.oldest[0]).toMatchObject({
      id: distribution.body.id,
      kind: 'init',
      amount: '10000',
      currency: 'XAF',
    });
    for (const queue of [
      report.orders.unknown,
      report.orders.expired,
      report.orders.stalePending,
      report.orders.needsReview,
      report.cardOperations.unknown,
      report.distributions.unknown,
    ]) {
      expect(queue.oldest.length).toBeLessThanOrEqual(20);
      const times = queue.oldest.map((item: { createdAt: string }) => item.createdAt);
      expect(times).toEqual([...times].sort());
    }

    expect((await admin.resolveOrder(unknownEarlier.id, { status: 'SUCCEEDED', note: 'checked' })).status).toBe(200);
    const after = (await admin.attention()).body;
    expect(after.orders.unknown.count).toBe(report.orders.unknown.count - 1);
    expect(after.orders.unknown.oldest[0].id).toBe(unknownLater.id);
  });

  it('customers get 403', async () => {
    const buyer = await customer(service);
    const res = await adminCalls(service, buyer.token).attention();
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
  });

  it.each([
    ['orders UNKNOWN', "FROM orders WHERE status = 'UNKNOWN'"],
    ['orders EXPIRED', "FROM orders WHERE status = 'EXPIRED'"],
    ['orders stale PENDING', "FROM orders WHERE status = 'PENDING' AND created_at < now() - interval '70 seconds'"],
    ['orders needing review', 'FROM orders WHERE needs_review = true'],
    ['card operations UNKNOWN', "FROM card_operations WHERE status = 'UNKNOWN'"],
    ['distributions UNKNOWN', "FROM distributions WHERE status = 'UNKNOWN'"],
  ])('%s: the oldest and the count are served by an index', async (_name, from) => {
    for (const sql of [`SELECT id ${from} ORDER BY created_at ASC, id ASC LIMIT 20`, `SELECT count(*) ${from}`]) {
      const plan = await service.prisma.$transaction(async (tx) => {
        for (const setting of ['seqscan', 'sort', 'bitmapscan']) await tx.$executeRawUnsafe(`SET LOCAL enable_${setting} = off`);
        return tx.$queryRawUnsafe<Record<string, unknown>[]>(`EXPLAIN (FORMAT JSON) ${sql}`);
      });
      const column = Object.values(plan[0])[0];
      const types = nodeTypes(((typeof column === 'string' ? JSON.parse(column) : column) as { Plan: PlanNode }[])[0].Plan);
      expect(types.filter((type) => /Sort|Seq Scan/.test(type))).toEqual([]);
    }
  });

  it('/metrics reports orders_by_status for every status, zero included', async () => {
    const text = (await request(service.server).get('/metrics')).text;
    for (const status of ORDER_STATUSES) expect(text).toMatch(new RegExp(`^orders_by_status\\{status="${status}"\\} \\d+$`, 'm'));
  });
});
