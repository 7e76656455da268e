import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { OrdersRepository } from '../../src/orders/orders.repository';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer, parseSse, waitForOrder } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { adminCalls, auditRowsOf, orderMaker, providerCallback, type Buyer } from './support';

const NOTE = 'Provider dashboard: SP35245212801583 settled 2026-11-23';

describe('people decide orders the provider left undecided', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let buyer: Buyer;
  let make: ReturnType<typeof orderMaker>;
  let admin: ReturnType<typeof adminCalls>;
  const adminSub = `admin_${randomUUID().slice(0, 6)}`;
  /** Past the interrupted-work window of PROVIDER_TIMEOUT_MS=5000 (2 × 5 s + 60 s = 70 s). */
  const STALE = 600;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    buyer = await customer(service);
    make = orderMaker(service, buyer);
    admin = adminCalls(service, await service.bearer(adminSub, 'admin'));
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  const historyOf = async (id: string) => service.prisma.orderStatusChange.findMany({ where: { orderId: id }, orderBy: { id: 'asc' } });

  describe('POST /v1/orders/{id}/resolution', () => {
    it('UNKNOWN → SUCCEEDED: history with actor and note, one audit event with the request id', async () => {
      const order = await make.unknown();
      const res = await admin.resolveOrder(order.id, { status: 'SUCCEEDED', note: `  ${NOTE}  ` });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: order.id, status: 'SUCCEEDED', needsReview: false, failureReason: null });
      expect(res.body.history.at(-1)).toMatchObject({
        fromStatus: 'UNKNOWN',
        status: 'SUCCEEDED',
        reason: 'manual_resolution',
        actor: adminSub,
        note: NOTE,
      });

      const audit = await auditRowsOf(service, order.id);
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({
        actor: adminSub,
        action: 'order.resolved',
        resourceType: 'order',
        note: NOTE,
        requestId: res.headers['x-request-id'],
        details: { fromStatus: 'UNKNOWN', toStatus: 'SUCCEEDED' },
      });
    });

    it('the customer sees that a person decided, not who nor the note', async () => {
      const order = await make.unknown();
      expect((await admin.resolveOrder(order.id, { status: 'FAILED', note: NOTE })).status).toBe(200);
      const own = await buyer.getOrder(order.id);
      expect(own.body.status).toBe('FAILED');
      expect(own.body.history.at(-1)).toMatchObject({ reason: 'manual_resolution', actor: null, note: null });
      const finance = await request(service.server)
        .get(`/v1/orders/${order.id}`)
        .auth(await service.bearer('fin', 'finance'), { type: 'bearer' });
      expect(finance.body.history.at(-1)).toMatchObject({ actor: adminSub, note: NOTE });
    });

    it('EXPIRED → FAILED, with a failure reason', async () => {
      const order = await make.expired();
      expect((await buyer.getOrder(order.id)).body.status).toBe('EXPIRED');
      const res = await admin.resolveOrder(order.id, { status: 'FAILED', note: NOTE });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'FAILED', failureReason: expect.stringMatching(/manual resolution/) });
      expect(res.body.history.map((h: { status: string }) => h.status)).toEqual(['PENDING', 'PROCESSING', 'EXPIRED', 'FAILED']);
    });

    it('a PENDING order older than the interrupted-work window → SUCCEEDED', async () => {
      const order = await make.pending(STALE);
      const res = await admin.resolveOrder(order.id, { status: 'SUCCEEDED', note: NOTE });
      expect(res.status).toBe(200);
      expect(res.body.history.at(-1)).toMatchObject({ fromStatus: 'PENDING', status: 'SUCCEEDED', reason: 'manual_resolution' });
    });

    it('a PENDING order inside the window is 409: its provider call may still be answered', async () => {
      const order = await make.pending(5);
      const res = await admin.resolveOrder(order.id, { status: 'SUCCEEDED', note: NOTE });
      expect(res.status).toBe(409);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(res.body).toMatchObject({ code: 'order_not_resolvable', detail: expect.stringMatching(/PENDING for less than 70 seconds/) });
      expect((await historyOf(order.id)).map((h) => h.toStatus)).toEqual(['PENDING']);
      expect(await auditRowsOf(service, order.id)).toEqual([]);
    });

    it.each([
      ['PROCESSING', () => make.processing()],
      ['FAILED', () => make.failed()],
      [
        'SUCCEEDED (already resolved)',
        async () => {
          const order = await make.unknown();
          await admin.resolveOrder(order.id, { status: 'SUCCEEDED', note: NOTE });
          return order;
        },
      ],
    ])('%s is 409 order_not_resolvable and changes nothing', async (_name, makeOrder) => {
      const order = await makeOrder();
      const before = await historyOf(order.id);
      const auditBefore = await auditRowsOf(service, order.id);
      const res = await admin.resolveOrder(order.id, { status: 'FAILED', note: NOTE });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('order_not_resolvable');
      expect(await historyOf(order.id)).toEqual(before);
      expect(await auditRowsOf(service, order.id)).toEqual(auditBefore);
    });

    it.each([
      ['no note', { status: 'SUCCEEDED' }, 'note'],
      ['a blank note', { status: 'SUCCEEDED', note: '   ' }, 'note'],
      ['a note of 501 characters', { status: 'SUCCEEDED', note: 'x'.repeat(501) }, 'note'],
      ['a NUL in the note', { status: 'SUCCEEDED', note: 'checked\u0000' }, 'note'],
      ['an unpaired surrogate in the note', { status: 'SUCCEEDED', note: 'checked \ud800' }, 'note'],
      ['a status a person cannot decide', { status: 'PENDING', note: NOTE }, 'status'],
      ['no status', { note: NOTE }, 'status'],
    ])('%s: 400 validation_failed naming the field, nothing written', async (_name, body, field) => {
      const order = await make.unknown();
      const res = await admin.resolveOrder(order.id, body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect((await historyOf(order.id)).map((h) => h.toStatus)).toEqual(['PENDING', 'UNKNOWN']);
      expect(await auditRowsOf(service, order.id)).toEqual([]);
    });

    it('a note of exactly 500 characters is accepted', async () => {
      const order = await make.unknown();
      const res = await admin.resolveOrder(order.id, { status: 'SUCCEEDED', note: 'n'.repeat(500) });
      expect(res.status).toBe(200);
      expect(res.body.history.at(-1).note).toHaveLength(500);
    });

    it('customer (even the owner) and finance get 403; a missing order 404; no key 400', async () => {
      const order = await make.unknown();
      const body = { status: 'SUCCEEDED', note: NOTE };
      expect((await adminCalls(service, buyer.token).resolveOrder(order.id, body)).status).toBe(403);
      expect((await adminCalls(service, await service.bearer('fin', 'finance')).resolveOrder(order.id, body)).status).toBe(403);
      const missing = await admin.resolveOrder(randomUUID(), body);
      expect(missing.status).toBe(404);
      expect(missing.body.code).toBe('not_found');
      expect((await admin.resolveOrder('not-an-order-id', body)).status).toBe(404);
      const noKey = await admin.resolveOrder(order.id, body, null);
      expect(noKey.status).toBe(400);
      expect(noKey.body.code).toBe('idempotency_key_required');
      expect((await buyer.getOrder(order.id)).body.status).toBe('UNKNOWN');
      expect(await auditRowsOf(service, order.id)).toEqual([]);
    });

    it('a retry with the same key replays the answer and decides nothing twice; another body is 422', async () => {
      const order = await make.unknown();
      const key = randomUUID();
      const first = await admin.resolveOrder(order.id, { status: 'SUCCEEDED', note: NOTE }, key);
      const replay = await admin.resolveOrder(order.id, { status: 'SUCCEEDED', note: NOTE }, key);
      expect(first.status).toBe(200);
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      const other = await admin.resolveOrder(order.id, { status: 'FAILED', note: NOTE }, key);
      expect(other.status).toBe(422);
      expect(other.body.code).toBe('idempotency_key_reused');
      expect((await historyOf(order.id)).filter((h) => h.reason === 'manual_resolution')).toHaveLength(1);
      expect(await auditRowsOf(service, order.id)).toHaveLength(1);
    });

    it("the order's live stream sees the resolution and ends", async () => {
      const order = await make.unknown();
      const stream = buyer.events(order.id).then((res) => parseSse(res.text));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await admin.resolveOrder(order.id, { status: 'SUCCEEDED', note: NOTE })).status).toBe(200);
      const events = await stream;
      expect(events.at(-1)).toMatchObject({
        event: 'status',
        data: { orderId: order.id, status: 'SUCCEEDED', reason: 'manual_resolution' },
      });
    });
  });

  describe('provider callbacks after a resolution', () => {
    it('one that agrees is DUPLICATE and changes nothing', async () => {
      const order = await make.unknown();
      await admin.resolveOrder(order.id, { status: 'SUCCEEDED', note: NOTE });
      const res = await providerCallback(service, order.id, 'success');
      expect(res.status).toBe(200);
      const stored = await service.prisma.providerCallback.findUniqueOrThrow({ where: { id: res.body.callbackId } });
      expect(stored.result).toBe('DUPLICATE');
      const after = await buyer.getOrder(order.id);
      expect(after.body).toMatchObject({ status: 'SUCCEEDED', needsReview: false });
      expect(after.body.history.at(-1).reason).toBe('manual_resolution');
    });

    it('one that contradicts is CONFLICT and flags the order; a person then clears the flag', async () => {
      const order = await make.unknown();
      await admin.resolveOrder(order.id, { status: 'FAILED', note: NOTE });
      const res = await providerCallback(service, order.id, 'success');
      expect(res.status).toBe(200);
      expect((await service.prisma.providerCallback.findUniqueOrThrow({ where: { id: res.body.callbackId } })).result).toBe('CONFLICT');
      expect((await buyer.getOrder(order.id)).body).toMatchObject({ status: 'FAILED', needsReview: true });

      const cleared = await admin.clearReview(order.id, { note: 'Provider confirms the refund; FAILED stands' });
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({ status: 'FAILED', needsReview: false });
      expect(cleared.body.history.at(-1)).toMatchObject({
        fromStatus: 'FAILED',
        status: 'FAILED',
        reason: 'review_cleared',
        actor: adminSub,
        note: 'Provider confirms the refund; FAILED stands',
      });
      const audit = await auditRowsOf(service, order.id);
      expect(audit.map((a) => a.action)).toEqual(['order.resolved', 'order.review_cleared']);
      expect(audit[1]).toMatchObject({ actor: adminSub, requestId: cleared.headers['x-request-id'], details: { status: 'FAILED' } });

      // Nothing left to clear.
      const again = await admin.clearReview(order.id, { note: 'twice' });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('order_review_not_needed');
      expect(await auditRowsOf(service, order.id)).toHaveLength(2);
    });
  });

  describe('POST /v1/orders/{id}/review', () => {
    it('an order that is not flagged: 409 order_review_not_needed, nothing written', async () => {
      const order = await make.processing();
      const res = await admin.clearReview(order.id, { note: NOTE });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('order_review_not_needed');
      expect((await historyOf(order.id)).map((h) => h.reason)).toEqual(['created', 'provider_accepted']);
      expect(await auditRowsOf(service, order.id)).toEqual([]);
    });

    it('customer and finance 403, a missing order 404, a note is required', async () => {
      const order = await make.processing();
      expect((await adminCalls(service, buyer.token).clearReview(order.id, { note: NOTE })).status).toBe(403);
      expect((await adminCalls(service, await service.bearer('fin', 'finance')).clearReview(order.id, { note: NOTE })).status).toBe(403);
      expect((await admin.clearReview(randomUUID(), { note: NOTE })).status).toBe(404);
      const noNote = await admin.clearReview(order.id, {});
      expect(noNote.status).toBe(400);
      expect(new Set(noNote.body.errors.map((e: { field: string }) => e.field))).toEqual(new Set(['note']));
    });
  });

  it('the repository guard alone refuses an order a callback decided after the use case looked at it', async () => {
    const order = await make.unknown();
    expect((await providerCallback(service, order.id, 'success')).status).toBe(200);
    const moved = await service.get(OrdersRepository).resolveManually(
      order.id,
      'FAILED',
      { statuses: ['UNKNOWN', 'EXPIRED'], pendingOlderThanSeconds: 70 },
      { actor: adminSub, note: NOTE },
      {
        actor: adminSub,
        action: 'order.resolved',
        resourceType: 'order',
        resourceId: order.id,
        requestId: null,
        note: NOTE,
        details: null,
      },
    );
    expect(moved).toBeUndefined();
    expect((await historyOf(order.id)).map((h) => h.reason)).toEqual(['created', 'provider_outcome_unknown', 'callback_success']);
    expect(await auditRowsOf(service, order.id)).toEqual([]);
  });

  it('a resolution and a callback at the same time: exactly one decides', async () => {
    for (let round = 0; round < 6; round++) {
      const order = await make.unknown();
      const [resolution, callback] = await Promise.all([
        admin.resolveOrder(order.id, { status: 'FAILED', note: NOTE }),
        providerCallback(service, order.id, 'success'),
      ]);
      expect(callback.status).toBe(200);
      const stored = await service.prisma.providerCallback.findUniqueOrThrow({ where: { id: callback.body.callbackId } });
      const deciding = (await historyOf(order.id)).filter((h) => h.fromStatus === 'UNKNOWN');
      expect(deciding).toHaveLength(1);
      const final = await waitForOrder(service, buyer.token, order.id, () => true);
      if (resolution.status === 200) {
        // The person decided first: the provider's success contradicts it.
        expect(deciding[0]).toMatchObject({ toStatus: 'FAILED', reason: 'manual_resolution' });
        expect(stored.result).toBe('CONFLICT');
        expect(final).toMatchObject({ status: 'FAILED', needsReview: true });
        expect(await auditRowsOf(service, order.id)).toHaveLength(1);
      } else {
        expect(resolution.status).toBe(409);
        expect(resolution.body.code).toBe('order_not_resolvable');
        expect(deciding[0]).toMatchObject({ toStatus: 'SUCCEEDED', reason: 'callback_success' });
        expect(stored.result).toBe('APPLIED');
        expect(final).toMatchObject({ status: 'SUCCEEDED', needsReview: false });
        expect(await auditRowsOf(service, order.id)).toEqual([]);
      }
    }
  });
});
