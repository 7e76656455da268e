import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { auditRowsOf, orderMaker, providerCallback, type Buyer } from '../resolutions/support';

/** GET /v1/events, GET /v1/events/{id}, POST /v1/events/{id}/redeliver. */
describe('the events API', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let buyer: Buyer;
  let make: ReturnType<typeof orderMaker>;
  let adminToken: string;
  let financeToken: string;
  const adminSub = `admin_${randomUUID().slice(0, 6)}`;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    buyer = await customer(service);
    make = orderMaker(service, buyer);
    adminToken = await service.bearer(adminSub, 'admin');
    financeToken = await service.bearer('fin-events-api', 'finance');
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  const get = (path: string, token: string, query: Record<string, string> = {}) =>
    request(service.server).get(path).query(query).auth(token, { type: 'bearer' });
  const redeliver = (id: string, body: Record<string, unknown>, token = adminToken) =>
    request(service.server).post(`/v1/events/${id}/redeliver`).auth(token, { type: 'bearer' }).send(body);

  /** An endpoint stored as the endpoints API stores one (its secret is not used here). */
  const endpoint = async (status: 'ENABLED' | 'DISABLED', events: string[]) =>
    (
      await service.prisma.webhookEndpoint.create({
        data: { id: randomUUID(), url: `https://hooks.example.com/${randomUUID()}`, events, status, secretEncrypted: 'sealed' },
      })
    ).id;

  /** An order with three events: order.processing, order.succeeded, order.review_needed (oldest first). */
  const orderWithThreeEvents = async () => {
    const order = await make.processing();
    await providerCallback(service, order.id, 'success');
    await providerCallback(service, order.id, 'failure');
    const events = await service.prisma.event.findMany({ where: { resourceId: order.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    expect(events.map((e) => e.type)).toEqual(['order.processing', 'order.succeeded', 'order.review_needed']);
    return { order, events };
  };

  describe('GET /v1/events', () => {
    it('newest first, one page after another, each event { id, type, timestamp, data }', async () => {
      const { order, events } = await orderWithThreeEvents();
      const seen: Record<string, any>[] = [];
      let cursor: string | undefined;
      do {
        const res = await get('/v1/events', financeToken, { resourceId: order.id, limit: '1', ...(cursor ? { cursor } : {}) });
        expect(res.status).toBe(200);
        expect(res.body.items.length).toBeLessThanOrEqual(1);
        seen.push(...res.body.items);
        cursor = res.body.nextCursor ?? undefined;
      } while (cursor);
      expect(seen.map((e) => e.id)).toEqual(events.map((e) => e.id).reverse());
      expect(seen[0]).toEqual({
        id: events[2].id,
        type: 'order.review_needed',
        timestamp: events[2].createdAt.toISOString(),
        data: expect.objectContaining({ id: order.id, status: 'SUCCEEDED', needsReview: true, previousStatus: 'SUCCEEDED' }),
      });
      expect(seen[2].data).toMatchObject({ status: 'PROCESSING', previousStatus: 'PENDING' });
    });

    it('filters by type, and by the window [from, to)', async () => {
      const { order, events } = await orderWithThreeEvents();
      const byType = await get('/v1/events', financeToken, { resourceId: order.id, type: 'order.succeeded' });
      expect(byType.body.items.map((e: { id: string }) => e.id)).toEqual([events[1].id]);

      const onlyType = await get('/v1/events', financeToken, { type: 'order.review_needed', limit: '20' });
      expect(onlyType.status).toBe(200);
      expect(onlyType.body.items.length).toBeGreaterThan(0);
      expect(onlyType.body.items.every((e: { type: string }) => e.type === 'order.review_needed')).toBe(true);

      const fromLast = await get('/v1/events', financeToken, { resourceId: order.id, from: events[2].createdAt.toISOString() });
      expect(fromLast.body.items.map((e: { id: string }) => e.id)).toEqual(
        events
          .filter((e) => e.createdAt >= events[2].createdAt)
          .map((e) => e.id)
          .reverse(),
      );
      const beforeFirst = await get('/v1/events', financeToken, { resourceId: order.id, to: events[0].createdAt.toISOString() });
      expect(beforeFirst.body.items).toEqual([]);
    });

    it('400 for an unknown type, a resource id that is no UUID, a cursor this API did not write', async () => {
      const queries: Record<string, string>[] = [
        { type: 'order.pending' },
        { resourceId: 'abc' },
        { cursor: 'bm90LWEtY3Vyc29y' },
        { limit: '0' },
      ];
      for (const query of queries) {
        const res = await get('/v1/events', financeToken, query);
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toMatch(/problem\+json/);
        expect(res.body.code).toBe('validation_failed');
      }
    });

    it('finance and admins only: a customer gets 403, no token 401', async () => {
      expect((await get('/v1/events', buyer.token)).status).toBe(403);
      expect((await get('/v1/events', adminToken)).status).toBe(200);
      expect((await request(service.server).get('/v1/events')).status).toBe(401);
    });
  });

  describe('GET /v1/events/{id}', () => {
    it('the event with its deliveries and every attempt (the first 1 KiB of each answer)', async () => {
      const order = await make.failed();
      const event = await service.prisma.event.findFirstOrThrow({ where: { resourceId: order.id } });
      const disabled = await endpoint('DISABLED', []);
      const delivery = await service.prisma.webhookDelivery.create({
        data: { id: randomUUID(), eventId: event.id, endpointId: disabled, status: 'FAILED', attemptCount: 2, completedAt: new Date() },
      });
      await service.prisma.webhookAttempt.create({
        data: { deliveryId: delivery.id, httpStatus: null, durationMs: 10_000, error: 'timeout after 10000 ms', responseBody: null },
      });
      await service.prisma.webhookAttempt.create({
        data: { deliveryId: delivery.id, httpStatus: 500, durationMs: 42, error: null, responseBody: 'é'.repeat(1000) },
      });

      const res = await get(`/v1/events/${event.id}`, financeToken);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: event.id,
        type: 'order.failed',
        timestamp: event.createdAt.toISOString(),
        data: { id: order.id, status: 'FAILED', previousStatus: 'PENDING' },
      });
      const mine = res.body.deliveries.find((d: { id: string }) => d.id === delivery.id);
      expect(mine).toEqual({
        id: delivery.id,
        endpointId: disabled,
        // Finance sees the origin only: the path of the URL is the receiver's own.
        endpointOrigin: 'https://hooks.example.com',
        status: 'FAILED',
        attemptCount: 2,
        nextAttemptAt: delivery.nextAttemptAt.toISOString(),
        createdAt: delivery.createdAt.toISOString(),
        completedAt: delivery.completedAt!.toISOString(),
        attempts: [
          { at: expect.any(String), httpStatus: null, durationMs: 10_000, error: 'timeout after 10000 ms', responseBody: null },
          { at: expect.any(String), httpStatus: 500, durationMs: 42, error: null, responseBody: 'é'.repeat(512) },
        ],
      });
      expect(new Date(mine.attempts[0].at).toISOString()).toBe(mine.attempts[0].at);
    });

    it('404 problem+json for an unknown or malformed id; 403 for a customer', async () => {
      for (const id of [`evt_${randomUUID().replace(/-/g, '')}`, 'evt_nope', randomUUID()]) {
        const res = await get(`/v1/events/${id}`, financeToken);
        expect(res.status).toBe(404);
        expect(res.headers['content-type']).toMatch(/problem\+json/);
        expect(res.body.code).toBe('not_found');
      }
      const order = await make.failed();
      const event = await service.prisma.event.findFirstOrThrow({ where: { resourceId: order.id } });
      expect((await get(`/v1/events/${event.id}`, buyer.token)).status).toBe(403);
    });
  });

  describe('POST /v1/events/{id}/redeliver', () => {
    it('to one endpoint: a new PENDING delivery due now, answered, audited with the request id', async () => {
      const order = await make.processing();
      const event = await service.prisma.event.findFirstOrThrow({ where: { resourceId: order.id } });
      const target = await endpoint('ENABLED', ['order.failed']);
      const res = await redeliver(event.id, { endpointId: target });
      expect(res.status).toBe(201);
      expect(res.body.deliveries).toEqual([
        {
          id: expect.any(String),
          endpointId: target,
          endpointOrigin: 'https://hooks.example.com',
          endpointUrl: expect.stringMatching(/^https:\/\/hooks\.example\.com\/[0-9a-f-]{36}$/),
          status: 'PENDING',
          attemptCount: 0,
          nextAttemptAt: expect.any(String),
          createdAt: expect.any(String),
          completedAt: null,
          attempts: [],
        },
      ]);
      expect(Math.abs(Date.parse(res.body.deliveries[0].nextAttemptAt) - Date.now())).toBeLessThan(60_000);
      const row = await service.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: res.body.deliveries[0].id } });
      expect(row).toMatchObject({ eventId: event.id, endpointId: target });

      const audit = await auditRowsOf(service, event.id);
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({
        actor: adminSub,
        action: 'event.redelivered',
        resourceType: 'event',
        requestId: res.headers['x-request-id'],
        details: { endpointId: target, deliveryIds: [res.body.deliveries[0].id] },
      });
      const listed = await get('/v1/audit-events', financeToken, { action: 'event.redelivered', resourceId: event.id });
      expect(listed.status).toBe(200);
      expect(listed.body.items).toHaveLength(1);
    });

    it('without an endpoint: to every ENABLED endpoint subscribed to the type (none disabled, none unsubscribed)', async () => {
      const subscribed = await endpoint('ENABLED', ['order.processing']);
      const other = await endpoint('ENABLED', ['order.failed']);
      const disabled = await endpoint('DISABLED', ['order.processing']);
      const order = await make.processing();
      const event = await service.prisma.event.findFirstOrThrow({ where: { resourceId: order.id } });
      const fannedOut = await service.prisma.webhookDelivery.findMany({ where: { eventId: event.id } });
      expect(fannedOut.map((d) => d.endpointId)).toContain(subscribed);

      const res = await redeliver(event.id, {});
      expect(res.status).toBe(201);
      const targets = res.body.deliveries.map((d: { endpointId: string }) => d.endpointId);
      expect(targets).toContain(subscribed);
      expect(targets).not.toContain(other);
      expect(targets).not.toContain(disabled);
      expect(res.body.deliveries.every((d: { status: string }) => d.status === 'PENDING')).toBe(true);
      expect(await service.prisma.webhookDelivery.count({ where: { eventId: event.id } })).toBe(fannedOut.length + targets.length);
      expect((await auditRowsOf(service, event.id))[0]).toMatchObject({ details: { endpointId: null } });
    });

    it('404 for an unknown event or endpoint, 409 for a disabled endpoint, 400 for a malformed one: nothing created, nothing audited', async () => {
      const order = await make.processing();
      const event = await service.prisma.event.findFirstOrThrow({ where: { resourceId: order.id } });
      const before = await service.prisma.webhookDelivery.count({ where: { eventId: event.id } });

      const noEvent = await redeliver(`evt_${randomUUID().replace(/-/g, '')}`, {});
      expect(noEvent.status).toBe(404);
      expect(noEvent.body.code).toBe('not_found');
      expect((await redeliver('garbage', {})).status).toBe(404);

      const noEndpoint = await redeliver(event.id, { endpointId: randomUUID() });
      expect(noEndpoint.status).toBe(404);
      expect(noEndpoint.headers['content-type']).toMatch(/problem\+json/);
      expect(noEndpoint.body.code).toBe('not_found');

      const disabled = await redeliver(event.id, { endpointId: await endpoint('DISABLED', []) });
      expect(disabled.status).toBe(409);
      expect(disabled.body.code).toBe('webhook_endpoint_disabled');

      const malformed = await redeliver(event.id, { endpointId: 'x' });
      expect(malformed.status).toBe(400);
      expect(malformed.body.errors.map((e: { field: string }) => e.field)).toEqual(['endpointId']);
      expect((await redeliver(event.id, { unknown: 1 })).status).toBe(400);

      expect(await service.prisma.webhookDelivery.count({ where: { eventId: event.id } })).toBe(before);
      expect(await auditRowsOf(service, event.id)).toEqual([]);
    });

    it('admins only: finance and customers get 403', async () => {
      const order = await make.processing();
      const event = await service.prisma.event.findFirstOrThrow({ where: { resourceId: order.id } });
      expect((await redeliver(event.id, {}, financeToken)).status).toBe(403);
      expect((await redeliver(event.id, {}, buyer.token)).status).toBe(403);
      expect(await auditRowsOf(service, event.id)).toEqual([]);
    });
  });
});
