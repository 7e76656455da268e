import { randomUUID } from 'node:crypto';
import { IdempotencyRepository } from '../../src/idempotency/idempotency.repository';
import { OrdersRepository } from '../../src/orders/orders.repository';
import { TEST_WALLETS } from '../../src/sandbox/sandbox.server';
import { cardsClient, userWithCard } from '../support/cards-factories';
import { customer } from '../support/orders-client';
import type { TestService } from '../support/test-service';
import { apiUser, startLinkHosts, uniqueLinkEmail, type LinkHosts } from '../wallet-links/link-hosts';

/**
 * A request that died while holding its Idempotency-Key (crash, kill, lost database) never
 * strands the key: once its lease lapses, a retry answers the resource it created, as it is now,
 * or runs anew when it created nothing. Here the death is simulated on the record (back in
 * progress, its lease past, as a dead process leaves it); test/app/kill-during-payin.e2e-spec.ts
 * kills a real process.
 */
describe('Idempotency-Key recovery after the request holding it died', () => {
  let hosts: LinkHosts;
  let service: TestService;

  beforeAll(async () => {
    hosts = await startLinkHosts({ PROVIDER_TIMEOUT_MS: '1000' });
    service = hosts.service;
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await hosts?.close();
  });

  const recordOf = async (key: string) => (await service.prisma.idempotencyRecord.findMany({ where: { key } }))[0];
  /** What a process that died before storing its answer leaves behind, once its lease has lapsed. */
  const dieBeforeStoring = (key: string) => service.prisma.$executeRaw`
    UPDATE idempotency_records SET state = 'in_progress', response_status = NULL, response_body = NULL, completed_at = NULL,
      lease_until = now() - interval '1 second'
    WHERE key = ${key}`;
  const payinsOf = (reference: string) =>
    hosts.base.state.requestsTo('/api/agent/bills/v3', 'POST').filter((r) => (r.body as { order_id?: string }).order_id === reference);

  describe('orders', () => {
    it('links the order to its record when it is stored, and answers a retry with the order as it is now', async () => {
      const alice = await customer(service);
      const key = randomUUID();
      const first = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK }, key);
      expect(first.status).toBe(201);
      expect(await recordOf(key)).toMatchObject({ resourceType: 'order', resourceId: first.body.id });

      await dieBeforeStoring(key);
      await service.prisma.$executeRaw`UPDATE orders SET status = 'UNKNOWN' WHERE id = ${first.body.id}::uuid`;
      const retry = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK }, key);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      const { history: _history, callbacks: _callbacks, ...now } = (await alice.getOrder(first.body.id)).body;
      expect(retry.body).toEqual(now);
      expect(retry.body).toMatchObject({ id: first.body.id, status: 'UNKNOWN' });
      expect(payinsOf(first.body.reference)).toHaveLength(1);
      expect(await service.prisma.order.count({ where: { customerId: alice.sub } })).toBe(1);
    });

    it('runs anew when the dead request created nothing', async () => {
      const alice = await customer(service);
      const key = randomUUID();
      expect((await alice.createOrder({}, key)).status).toBe(201);
      // As if it died before storing the order: no link, and no order of this request to answer.
      await dieBeforeStoring(key);
      await service.prisma.$executeRaw`UPDATE idempotency_records SET resource_type = NULL, resource_id = NULL WHERE key = ${key}`;
      const before = (await recordOf(key)).id;
      const retry = await alice.createOrder({}, key);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      const record = await recordOf(key);
      expect(record.id).not.toBe(before);
      expect(record).toMatchObject({ state: 'completed', resourceType: 'order', resourceId: retry.body.id });
    });

    it('of concurrent retries after the lease lapsed, exactly one runs anew: one new order, one pay-in', async () => {
      const alice = await customer(service);
      const key = randomUUID();
      const first = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK }, key);
      expect(first.status).toBe(201);
      await dieBeforeStoring(key);
      await service.prisma.$executeRaw`UPDATE idempotency_records SET resource_type = NULL, resource_id = NULL WHERE key = ${key}`;
      const retries = await Promise.all(Array.from({ length: 6 }, () => alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK }, key)));
      const ran = retries.filter((res) => res.status === 201 && res.headers['idempotent-replayed'] === undefined);
      expect(ran).toHaveLength(1);
      for (const res of retries.filter((r) => r !== ran[0])) {
        expect([201, 409]).toContain(res.status);
        if (res.status === 201) expect(res.body.id).toBe(ran[0].body.id);
      }
      const orders = await service.prisma.order.findMany({ where: { customerId: alice.sub } });
      expect(orders.map((o) => o.id).sort()).toEqual([first.body.id, ran[0].body.id].sort());
      expect(payinsOf(ran[0].body.reference)).toHaveLength(1);
    });

    it('a lost database mid-request ends the same way: the lease lapses, the retry answers the order (UNKNOWN once swept)', async () => {
      const alice = await customer(service);
      const key = randomUUID();
      // The database goes away after the order is stored and sent: neither its outcome nor the answer can be written.
      jest.spyOn(OrdersRepository.prototype, 'recordSubmission').mockRejectedValueOnce(new Error('Connection terminated unexpectedly'));
      jest.spyOn(IdempotencyRepository.prototype, 'complete').mockRejectedValueOnce(new Error('Connection terminated unexpectedly'));
      const first = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK }, key);
      // A lost connection is the database's unavailability, not an internal error.
      expect(first.status).toBe(503);
      const record = await recordOf(key);
      expect(record).toMatchObject({ state: 'in_progress', resourceType: 'order' });
      const orderId = record.resourceId!;
      expect((await alice.getOrder(orderId)).body.status).toBe('PENDING');

      await service.prisma.$executeRaw`UPDATE idempotency_records SET lease_until = now() - interval '1 second' WHERE key = ${key}`;
      const pending = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK }, key);
      expect(pending.status).toBe(201);
      expect(pending.body).toMatchObject({ id: orderId, status: 'PENDING' });

      // The interrupted-work sweep, with a window shorter than its production one.
      await service.prisma.$executeRaw`UPDATE orders SET submitted_at = now() - interval '1 hour' WHERE id = ${orderId}::uuid`;
      await service.get(OrdersRepository).sweep(service.config.orderExpiryMinutes, 60);
      const swept = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK }, key);
      expect(swept.status).toBe(201);
      expect(swept.headers['idempotent-replayed']).toBe('true');
      expect(swept.body).toMatchObject({ id: orderId, status: 'UNKNOWN' });
      expect(payinsOf(swept.body.reference)).toHaveLength(1);
    });
  });

  describe('cards', () => {
    it('a top-up: the retry answers the operation with its stored outcome, UNKNOWN once swept', async () => {
      const alice = await cardsClient(service);
      const { card } = await userWithCard(alice);
      const key = randomUUID();
      const first = await alice.topUp(card.id, '250', key);
      expect(first.status).toBe(200);
      expect(await recordOf(key)).toMatchObject({ resourceType: 'card_operation', resourceId: first.body.operationId });

      await dieBeforeStoring(key);
      const retry = await alice.topUp(card.id, '250', key);
      expect(retry.status).toBe(200);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toEqual(first.body);

      await service.prisma.$executeRaw`UPDATE card_operations SET status = 'UNKNOWN' WHERE id = ${first.body.operationId}::uuid`;
      const later = await alice.topUp(card.id, '250', key);
      expect(later.body).toMatchObject({ operationId: first.body.operationId, status: 'UNKNOWN', cardStatus: 'ACTIVE' });
      expect(hosts.base.state.requestsTo(`/api/action/card/transaction/${card.providerCardId}`)).toHaveLength(1);
    });

    it('a card creation: the retry answers the card without number nor CVV', async () => {
      const alice = await cardsClient(service);
      const cardUser = (await alice.createCardUser()).body;
      const key = randomUUID();
      const body = { balance: '700', currency: 'XAF' };
      const first = await alice.createCard(cardUser.id, body, key);
      expect(first.status).toBe(201);
      expect(await recordOf(key)).toMatchObject({ resourceType: 'card_creation', resourceId: first.body.operationId });

      await dieBeforeStoring(key);
      const retry = await alice.createCard(cardUser.id, body, key);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toMatchObject({
        id: first.body.id,
        last4: first.body.last4,
        operationId: first.body.operationId,
        secretsShownOnce: true,
      });
      expect(retry.body).not.toHaveProperty('cardNumber');
      expect(retry.body).not.toHaveProperty('cvv');
      expect(JSON.stringify(retry.body)).not.toContain(first.body.cardNumber);
      expect(hosts.base.state.requestsTo(`/api/action/card/${cardUser.providerUserId}`, 'POST')).toHaveLength(1);
    });

    it('a card creation that left no card: the retry says so, with the operation, and asks the provider nothing', async () => {
      const alice = await cardsClient(service);
      const cardUser = (await alice.createCardUser()).body;
      const key = randomUUID();
      const body = { balance: '700', currency: 'XAF' };
      hosts.base.state.injectFault({
        path: `/api/action/card/${cardUser.providerUserId}`,
        method: 'POST',
        status: 502,
        body: { message: 'upstream' },
      });
      const first = await alice.createCard(cardUser.id, body, key);
      expect(first.status).toBeGreaterThanOrEqual(500);
      const operationId = first.body.operationId as string;

      await dieBeforeStoring(key);
      const retry = await alice.createCard(cardUser.id, body, key);
      expect(retry.status).toBe(409);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toMatchObject({ code: 'card_creation_incomplete', operationId, operationStatus: 'UNKNOWN' });
      expect(hosts.base.state.requestsTo(`/api/action/card/${cardUser.providerUserId}`, 'POST')).toHaveLength(1);
    });
  });

  describe('distributions', () => {
    it('the retry answers the distribution as it is now, sent once', async () => {
      const owner = await apiUser(service);
      const matricules: string[] = [];
      for (const phone of ['650200001', '650200002']) {
        const res = await owner.createLink({ email: uniqueLinkEmail('recovery'), phone, phoneCountry: '+237' });
        expect(res.status).toBe(201);
        matricules.push(res.body.matricule);
      }
      await hosts.syncTokens();
      const admin = await apiUser(service, `admin_${randomUUID().slice(0, 6)}`, 'admin');
      const body = {
        payer: 'Awa Ndiaye',
        currency: 'XAF',
        amount: '900',
        distribution: [
          { matricule: matricules[0], rate: 50 },
          { matricule: matricules[1], rate: 50 },
        ],
      };
      const key = randomUUID();
      const fiatCalls = () => hosts.link.state.requestsTo('/api/agent/link/fiat-distribution').length;
      const callsBefore = fiatCalls();
      const first = await admin.createFiat(body, key);
      expect(first.status).toBe(201);
      expect(await recordOf(key)).toMatchObject({ resourceType: 'distribution', resourceId: first.body.id });

      await dieBeforeStoring(key);
      await service.prisma.$executeRaw`UPDATE distributions SET status = 'UNKNOWN' WHERE id = ${first.body.id}::uuid`;
      const retry = await admin.createFiat(body, key);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toEqual({ ...first.body, status: 'UNKNOWN' });
      expect(fiatCalls() - callsBefore).toBe(1);
    });
  });
});
