import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { OrderExpiryJob } from '../../src/orders/order-expiry.job';
import { InterruptedOperationsSweepJob } from '../../src/provider-operations/interrupted-operations-sweep.job';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, userWithCard, type CardsClientOf } from '../support/cards-factories';
import { customer } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { adminCalls, orderMaker, providerCallback, type Buyer } from '../resolutions/support';

const NOTE = 'Provider dashboard checked';
/** Past the interrupted-work window of PROVIDER_TIMEOUT_MS=5000 (2 × 5 s + 60 s = 70 s). */
const STALE_SECONDS = 600;

/** Every status change commits with exactly one event (written by the database), and a change that does not happen writes none. */
describe('one event per transition, committed with it', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let buyer: Buyer;
  let alice: CardsClientOf;
  let make: ReturnType<typeof orderMaker>;
  let admin: ReturnType<typeof adminCalls>;
  let adminToken: string;
  let financeToken: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    buyer = await customer(service);
    alice = await cardsClient(service);
    make = orderMaker(service, buyer);
    adminToken = await service.bearer(`admin_${randomUUID().slice(0, 6)}`, 'admin');
    admin = adminCalls(service, adminToken);
    financeToken = await service.bearer('fin-events', 'finance');
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });
  afterEach(() => sandbox.state.clearFaults());

  /** The events of a resource, oldest first, as [type, previousStatus]. */
  const eventsOf = async (resourceId: string) =>
    (await service.prisma.event.findMany({ where: { resourceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] })).map((e) => [
      e.type,
      e.previousStatus,
    ]);

  /** The newest event of a resource as GET /v1/events/{id} answers it. */
  const latestEvent = async (resourceId: string) => {
    const list = await request(service.server).get('/v1/events').query({ resourceId, limit: '1' }).auth(financeToken, { type: 'bearer' });
    expect(list.status).toBe(200);
    const res = await request(service.server).get(`/v1/events/${list.body.items[0].id}`).auth(financeToken, { type: 'bearer' });
    expect(res.status).toBe(200);
    return res.body as { id: string; type: string; timestamp: string; data: Record<string, unknown> };
  };

  /** The event's data is the resource as its GET answers it now (nothing changed since), plus previousStatus. */
  const expectDataAsGet = async (resourceId: string, path: string, token: string, omit: string[] = []) => {
    const event = await latestEvent(resourceId);
    const got = await request(service.server).get(path).auth(token, { type: 'bearer' });
    expect(got.status).toBe(200);
    const shown = Object.fromEntries(Object.entries(got.body as Record<string, unknown>).filter(([key]) => !omit.includes(key)));
    const { previousStatus, ...data } = event.data;
    expect(data).toEqual(shown);
    return { event, previousStatus };
  };

  const expectOrderDataAsGet = (id: string) => expectDataAsGet(id, `/v1/orders/${id}`, financeToken, ['history', 'callbacks']);

  describe('orders', () => {
    it('the provider answers PROCESSING: order.processing, from PENDING, the order as GET shows it', async () => {
      const order = await make.processing();
      expect(await eventsOf(order.id)).toEqual([['order.processing', 'PENDING']]);
      const { event, previousStatus } = await expectOrderDataAsGet(order.id);
      expect(previousStatus).toBe('PENDING');
      expect(event).toMatchObject({ type: 'order.processing', id: expect.stringMatching(/^evt_[0-9a-f]{32}$/) });
      expect(new Date(event.timestamp).toISOString()).toBe(event.timestamp);
    });

    it('the provider refuses: order.failed', async () => {
      const order = await make.failed();
      expect(await eventsOf(order.id)).toEqual([['order.failed', 'PENDING']]);
      await expectOrderDataAsGet(order.id);
    });

    it('the answer is lost: order.unknown', async () => {
      const order = await make.unknown();
      expect(await eventsOf(order.id)).toEqual([['order.unknown', 'PENDING']]);
      await expectOrderDataAsGet(order.id);
    });

    it('a success callback: order.succeeded; the same callback again changes nothing and writes nothing', async () => {
      const order = await make.processing();
      expect((await providerCallback(service, order.id, 'success')).status).toBeLessThan(300);
      expect(await eventsOf(order.id)).toEqual([
        ['order.processing', 'PENDING'],
        ['order.succeeded', 'PROCESSING'],
      ]);
      await expectOrderDataAsGet(order.id);
      expect((await providerCallback(service, order.id, 'success')).status).toBeLessThan(300);
      expect(await eventsOf(order.id)).toHaveLength(2);
    });

    it('a failure callback: order.failed; a contradicting callback after it: order.review_needed, once', async () => {
      const order = await make.processing();
      await providerCallback(service, order.id, 'failure');
      expect(await eventsOf(order.id)).toEqual([
        ['order.processing', 'PENDING'],
        ['order.failed', 'PROCESSING'],
      ]);
      await providerCallback(service, order.id, 'success');
      expect(await eventsOf(order.id)).toEqual([
        ['order.processing', 'PENDING'],
        ['order.failed', 'PROCESSING'],
        ['order.review_needed', 'FAILED'],
      ]);
      const { event } = await expectOrderDataAsGet(order.id);
      expect(event.data).toMatchObject({ status: 'FAILED', needsReview: true });
      // Flagged already: another contradiction writes no second review event.
      await providerCallback(service, order.id, 'success');
      expect(await eventsOf(order.id)).toHaveLength(3);
    });

    it('the expiry sweep: order.expired', async () => {
      const order = await make.expired();
      expect(await eventsOf(order.id)).toEqual([
        ['order.processing', 'PENDING'],
        ['order.expired', 'PROCESSING'],
      ]);
      await expectOrderDataAsGet(order.id);
    });

    it('the sweep of an interrupted submission: order.unknown, from PENDING', async () => {
      const order = await make.pending(STALE_SECONDS);
      expect(await eventsOf(order.id)).toEqual([]);
      await service.prisma.$executeRaw`UPDATE orders SET submitted_at = now() - interval '10 minutes' WHERE id = ${order.id}::uuid`;
      await service.get(OrderExpiryJob).sweepNow();
      expect(await eventsOf(order.id)).toEqual([['order.unknown', 'PENDING']]);
      await expectOrderDataAsGet(order.id);
    });

    it('a manual resolution: one event with the decided status', async () => {
      const order = await make.unknown();
      expect((await admin.resolveOrder(order.id, { status: 'SUCCEEDED', note: NOTE })).status).toBe(200);
      expect(await eventsOf(order.id)).toEqual([
        ['order.unknown', 'PENDING'],
        ['order.succeeded', 'UNKNOWN'],
      ]);
      await expectOrderDataAsGet(order.id);
    });

    it('a refused resolution (409) writes no event', async () => {
      const order = await make.processing();
      expect((await admin.resolveOrder(order.id, { status: 'FAILED', note: NOTE })).status).toBe(409);
      expect(await eventsOf(order.id)).toEqual([['order.processing', 'PENDING']]);
    });

    it('a transition rolled back leaves no event (nor any delivery)', async () => {
      const order = await make.processing();
      const deliveriesBefore = await service.prisma.webhookDelivery.count();
      await expect(
        service.prisma.$transaction([
          service.prisma.$executeRaw`UPDATE orders SET status = 'SUCCEEDED' WHERE id = ${order.id}::uuid`,
          service.prisma.$executeRaw`UPDATE orders SET needs_review = true WHERE id = ${order.id}::uuid`,
          service.prisma.$executeRaw`SELECT 1 / 0`,
        ]),
      ).rejects.toThrow();
      expect(await eventsOf(order.id)).toEqual([['order.processing', 'PENDING']]);
      expect(await service.prisma.webhookDelivery.count()).toBe(deliveriesBefore);
      expect((await buyer.getOrder(order.id)).body.status).toBe('PROCESSING');
    });
  });

  describe('card operations', () => {
    const operationPath = (id: string) => `/v1/card-operations/${id}`;
    const failNextOperation = (providerCardId: string) =>
      sandbox.state.injectFault({
        path: `/api/action/card/transaction/${providerCardId}`,
        status: 500,
        rawBody: '<html>boom</html>',
        contentType: 'text/html',
      });

    it('the provider accepts: card_operation.succeeded (the card creation too), never the provider answer', async () => {
      const { card } = await userWithCard(alice);
      const creation = await service.prisma.cardOperation.findFirstOrThrow({ where: { cardId: card.id, kind: 'CREATE' } });
      expect(await eventsOf(creation.id)).toEqual([['card_operation.succeeded', 'PENDING']]);
      const topUp = await alice.topUp(card.id, '100');
      expect(topUp.status).toBe(200);
      expect(await eventsOf(topUp.body.operationId)).toEqual([['card_operation.succeeded', 'PENDING']]);
      const { event } = await expectDataAsGet(topUp.body.operationId, operationPath(topUp.body.operationId), alice.token);
      expect(JSON.stringify(event)).not.toMatch(/providerResponse|provider_response|cvv|card_?number/i);
    });

    it('the provider refuses: card_operation.failed', async () => {
      const { card } = await userWithCard(alice);
      const refused = await alice.withdraw(card.id, '100000');
      expect(refused.body.operationStatus).toBe('FAILED');
      expect(await eventsOf(refused.body.operationId)).toEqual([['card_operation.failed', 'PENDING']]);
      await expectDataAsGet(refused.body.operationId, operationPath(refused.body.operationId), alice.token);
    });

    it('the answer is lost: card_operation.unknown; then a resolution: card_operation.succeeded', async () => {
      const { card } = await userWithCard(alice);
      failNextOperation(card.providerCardId);
      const lost = await alice.withdraw(card.id, '500');
      expect(lost.body.operationStatus).toBe('UNKNOWN');
      const id = lost.body.operationId as string;
      expect(await eventsOf(id)).toEqual([['card_operation.unknown', 'PENDING']]);
      await expectDataAsGet(id, operationPath(id), alice.token);
      expect((await admin.resolveCardOperation(id, { status: 'SUCCEEDED', note: NOTE })).status).toBe(200);
      expect(await eventsOf(id)).toEqual([
        ['card_operation.unknown', 'PENDING'],
        ['card_operation.succeeded', 'UNKNOWN'],
      ]);
      await expectDataAsGet(id, operationPath(id), alice.token);
    });

    it('the interrupted-work sweep: card_operation.unknown, from PENDING', async () => {
      const { cardUser, card } = await userWithCard(alice);
      const stale = await service.prisma.cardOperation.create({
        data: {
          cardUserId: cardUser.id,
          cardId: card.id,
          requestedBy: alice.sub,
          kind: 'TOPUP',
          amount: '100',
          currency: 'XAF',
          status: 'PENDING',
          createdAt: new Date(Date.now() - STALE_SECONDS * 1000),
        },
      });
      expect(await eventsOf(stale.id)).toEqual([]);
      await service.get(InterruptedOperationsSweepJob).sweepNow();
      expect(await eventsOf(stale.id)).toEqual([['card_operation.unknown', 'PENDING']]);
      await expectDataAsGet(stale.id, operationPath(stale.id), alice.token);
    });
  });

  describe('distributions', () => {
    const create = (distribution: { matricule: string; rate: string }[] = [{ matricule: 'MAT00000002', rate: '40' }]) =>
      request(service.server)
        .post('/v1/distributions')
        .auth(adminToken, { type: 'bearer' })
        .set('Idempotency-Key', randomUUID())
        .send({ paymentReceiver: 'MAT00000001', paymentId: `pay_${randomUUID()}`, amount: '10000', currency: 'XAF', distribution });
    const path = (id: string) => `/v1/distributions/${id}`;

    it('accepted: distribution.accepted, with its shares and remainder as GET shows them', async () => {
      // Two matricules the provider knows (as POST /v1/wallet-links leaves them in the sandbox).
      const matricules = ['MAT90000001', 'MAT90000002'];
      for (const matricule of matricules) {
        const email = `${matricule.toLowerCase()}@example.com`;
        sandbox.state.walletLinks.set(email, {
          email,
          phone: '670000000',
          phoneCountry: '+237',
          apikey: 'lk_test',
          matricule,
          created_at: new Date().toISOString(),
        });
      }
      const res = await create(matricules.map((matricule) => ({ matricule, rate: '33.33' })));
      expect(res.body.status).toBe('ACCEPTED');
      expect(await eventsOf(res.body.id)).toEqual([['distribution.accepted', 'PENDING']]);
      const { event } = await expectDataAsGet(res.body.id, path(res.body.id), adminToken);
      expect(event.data).toMatchObject({ distribution: [{ share: '3333' }, { share: '3333' }], remainder: '3334' });
    });

    it('refused: distribution.rejected', async () => {
      const res = await create([{ matricule: 'MAT00000000', rate: '10' }]);
      expect(res.body.status).toBe('REJECTED');
      expect(await eventsOf(res.body.id)).toEqual([['distribution.rejected', 'PENDING']]);
      await expectDataAsGet(res.body.id, path(res.body.id), adminToken);
    });

    it('lost: distribution.unknown; then a resolution: distribution.accepted', async () => {
      sandbox.state.injectFault({ path: '/api/agent/link/init', status: 500, rawBody: '<html>boom</html>', contentType: 'text/html' });
      const res = await create();
      expect(res.body.status).toBe('UNKNOWN');
      const id = res.body.id as string;
      expect(await eventsOf(id)).toEqual([['distribution.unknown', 'PENDING']]);
      await expectDataAsGet(id, path(id), adminToken);
      expect((await admin.resolveDistribution(id, { status: 'ACCEPTED', note: NOTE })).status).toBe(200);
      expect(await eventsOf(id)).toEqual([
        ['distribution.unknown', 'PENDING'],
        ['distribution.accepted', 'UNKNOWN'],
      ]);
      await expectDataAsGet(id, path(id), adminToken);
      // Decided already: a second resolution is refused and writes nothing.
      expect((await admin.resolveDistribution(id, { status: 'REJECTED', note: NOTE })).status).toBe(409);
      expect(await eventsOf(id)).toHaveLength(2);
    });
  });
});
