import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { adminCalls, auditRowsOf, orderMaker } from '../resolutions/support';

type PlanNode = { 'Node Type': string; Plans?: PlanNode[] };
const nodeTypes = (node: PlanNode): string[] => [node['Node Type'], ...(node.Plans ?? []).flatMap(nodeTypes)];

describe('the audit trail', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let admin: ReturnType<typeof adminCalls>;
  let finance: ReturnType<typeof adminCalls>;
  let financeToken: string;
  const adminSub = `admin_${randomUUID().slice(0, 6)}`;
  const financeSub = `fin_${randomUUID().slice(0, 6)}`;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    admin = adminCalls(service, await service.bearer(adminSub, 'admin'));
    financeToken = await service.bearer(financeSub, 'finance');
    finance = adminCalls(service, financeToken);
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  const explain = async (sql: string) => {
    const plan = await service.prisma.$transaction(async (tx) => {
      for (const setting of ['seqscan', 'sort', 'bitmapscan']) await tx.$executeRawUnsafe(`SET LOCAL enable_${setting} = off`);
      return tx.$queryRawUnsafe<Record<string, unknown>[]>(`EXPLAIN (FORMAT JSON) ${sql}`);
    });
    const column = Object.values(plan[0])[0];
    return nodeTypes(((typeof column === 'string' ? JSON.parse(column) : column) as { Plan: PlanNode }[])[0].Plan);
  };

  describe('append-only in the database', () => {
    let eventId: string;
    beforeAll(async () => {
      const buyer = await customer(service);
      const order = await orderMaker(service, buyer).unknown();
      expect((await admin.resolveOrder(order.id, { status: 'SUCCEEDED', note: 'checked' })).status).toBe(200);
      eventId = (await auditRowsOf(service, order.id))[0].id;
    });

    it.each([
      ['UPDATE', (id: string) => `UPDATE audit_events SET actor = 'mallory' WHERE id = '${id}'::uuid`],
      ['DELETE', (id: string) => `DELETE FROM audit_events WHERE id = '${id}'::uuid`],
      ['TRUNCATE', () => 'TRUNCATE audit_events'],
    ])('%s is refused by the trigger and changes nothing', async (_name, sql) => {
      await expect(service.prisma.$executeRawUnsafe(sql(eventId))).rejects.toThrow(/append-only/);
      expect(await service.prisma.auditEvent.findUniqueOrThrow({ where: { id: eventId } })).toMatchObject({ actor: adminSub });
    });

    it('through Prisma too (updateMany, deleteMany)', async () => {
      await expect(service.prisma.auditEvent.updateMany({ where: { id: eventId }, data: { note: 'rewritten' } })).rejects.toThrow(
        /append-only/,
      );
      await expect(service.prisma.auditEvent.deleteMany({ where: { id: eventId } })).rejects.toThrow(/append-only/);
      expect(await service.prisma.auditEvent.findUniqueOrThrow({ where: { id: eventId } })).toMatchObject({ note: 'checked' });
    });
  });

  describe('GET /v1/audit-events', () => {
    it('filters by actor, action, resourceId and time, newest first, page by page', async () => {
      const actor = `admin_${randomUUID().slice(0, 6)}`;
      const mine = adminCalls(service, await service.bearer(actor, 'admin'));
      const buyer = await customer(service);
      const make = orderMaker(service, buyer);
      const start = new Date().toISOString();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const order = await make.unknown();
        expect((await mine.resolveOrder(order.id, { status: i % 2 ? 'FAILED' : 'SUCCEEDED', note: `decision ${i}` })).status).toBe(200);
        ids.push(order.id);
      }

      const byActor = await finance.auditEvents({ actor });
      expect(byActor.status).toBe(200);
      expect(byActor.body.items.map((e: { resourceId: string }) => e.resourceId)).toEqual([...ids].reverse());
      expect(byActor.body.items[0]).toMatchObject({
        actor,
        action: 'order.resolved',
        resourceType: 'order',
        note: 'decision 2',
        requestId: expect.any(String),
        details: { fromStatus: 'UNKNOWN', toStatus: 'SUCCEEDED' },
      });

      // Pages of one, following nextCursor to the end.
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await finance.auditEvents({ actor, limit: '1', ...(cursor ? { cursor } : {}) });
        expect(page.status).toBe(200);
        seen.push(...page.body.items.map((e: { resourceId: string }) => e.resourceId));
        cursor = page.body.nextCursor ?? undefined;
      } while (cursor);
      expect(seen).toEqual([...ids].reverse());

      expect((await finance.auditEvents({ resourceId: ids[1] })).body.items).toEqual([
        expect.objectContaining({ actor, resourceId: ids[1], note: 'decision 1' }),
      ]);
      expect((await finance.auditEvents({ actor, action: 'order.review_cleared' })).body.items).toEqual([]);
      expect((await finance.auditEvents({ actor, action: 'order.resolved', from: start })).body.items).toHaveLength(3);
      expect((await finance.auditEvents({ actor, to: start })).body.items).toEqual([]);
    });

    it('admin reads it too; customers get 403; bad filters and cursors 400', async () => {
      expect((await admin.auditEvents()).status).toBe(200);
      const buyer = await customer(service);
      expect((await adminCalls(service, buyer.token).auditEvents()).status).toBe(403);
      for (const query of [
        { action: 'order.deleted' },
        { cursor: 'not-a-cursor' },
        { from: 'yesterday' },
        { limit: '201' },
        { actor: 'a\u0000b' },
      ] as Record<string, string>[]) {
        const res = await finance.auditEvents(query);
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toMatch(/problem\+json/);
      }
    });

    it.each([
      ['no filter', 'true'],
      ['by actor', "actor = 'alice'"],
      ['by action', "action = 'order.resolved'"],
      ['by resource', "resource_id = 'x'"],
    ])('%s is served by an index in keyset order', async (_name, filter) => {
      const types = await explain(
        `SELECT id FROM audit_events WHERE ${filter} AND (at < now() OR (at = now() AND id < '00000000-0000-0000-0000-000000000000'::uuid)) ORDER BY at DESC, id DESC LIMIT 51`,
      );
      expect(types.filter((type) => /Sort|Seq Scan/.test(type))).toEqual([]);
    });
  });

  describe('CSV exports are audited', () => {
    it('with the filters used; the file starts with a UTF-8 byte order mark unless ?bom=false', async () => {
      const buyer = await customer(service);
      await orderMaker(service, buyer).unknown();
      const exportCsv = (query: Record<string, string>) =>
        request(service.server)
          .get('/v1/orders/export.csv')
          .query(query)
          .auth(financeToken, { type: 'bearer' })
          .buffer(true)
          .parse((res, done) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => done(null, Buffer.concat(chunks)));
          });

      const withBom = await exportCsv({ status: 'UNKNOWN', currency: 'XAF' });
      expect(withBom.status).toBe(200);
      const bytes = withBom.body as Buffer;
      expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
      expect(bytes.subarray(3).toString('utf8')).toMatch(/^id,reference,/);

      const plain = await exportCsv({ status: 'UNKNOWN', bom: 'false' });
      expect((plain.body as Buffer).toString('utf8')).toMatch(/^id,reference,/);
      expect((await exportCsv({ status: 'UNKNOWN', bom: 'true' })).body.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));

      const events = (await finance.auditEvents({ actor: financeSub, action: 'orders.exported' })).body.items;
      expect(events).toHaveLength(3);
      expect(events[1]).toMatchObject({
        actor: financeSub,
        resourceType: 'orders_export',
        resourceId: null,
        requestId: plain.headers['x-request-id'],
        details: { filters: { status: 'UNKNOWN' }, bom: false },
      });
      expect(events[2]).toMatchObject({
        requestId: withBom.headers['x-request-id'],
        details: { filters: { status: 'UNKNOWN', currency: 'XAF' }, bom: true },
      });
    });

    it('a refused export (customer) is not recorded', async () => {
      const buyer = await customer(service);
      const res = await request(service.server).get('/v1/orders/export.csv').auth(buyer.token, { type: 'bearer' });
      expect(res.status).toBe(403);
      expect((await finance.auditEvents({ actor: buyer.sub })).body.items).toEqual([]);
    });
  });
});
