import { randomUUID } from 'node:crypto';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, userWithCard, type CardsClientOf } from '../support/cards-factories';
import type { TestService } from '../support/test-service';
import { useCardsService } from './cards-harness';

/** The card routes against the sandbox, asserted on the wire: see cards-harness.ts. */
describe('virtual cards end to end', () => {
  const context = useCardsService();
  const { requestsTo, expectProviderAuth } = context;
  let sandbox: RunningSandbox;
  let service: TestService;
  let alice: CardsClientOf;
  beforeAll(() => ({ sandbox, service, alice } = context));

  describe('cards', () => {
    it('POST /v1/card-users/{id}/cards sends balance and currency as strings and answers the number and CVV once, no-store', async () => {
      const { body: cardUser } = await alice.createCardUser();
      const res = await alice.createCard(cardUser.id, { balance: 5000, currency: 'XAF' });
      expect(res.status).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');

      const req = requestsTo(`/api/action/card/${cardUser.providerUserId}`, 'POST').at(-1)!;
      expectProviderAuth(req);
      expect(req.body).toEqual({ balance: '5000', currency: 'XAF' });

      const providerCard = sandbox.state.cards.get(res.body.providerCardId)!;
      expect(res.body).toMatchObject({
        id: expect.any(String),
        cardUserId: cardUser.id,
        ownerId: alice.sub,
        cardNumber: providerCard.card_number,
        cvv: providerCard.cvv,
        maskedNumber: `**** **** **** ${providerCard.card_number.slice(-4)}`,
        last4: providerCard.card_number.slice(-4),
        expiry: providerCard.expiry,
        currency: 'XAF',
        balance: '5000',
        status: 'ACTIVE',
        terminatedAt: null,
        secretsShownOnce: true,
        operationId: expect.any(String),
      });
      expect(res.body.cardNumber).toMatch(/^\d{16}$/);
      expect(res.body.note).toMatch(/shown only/);

      const row = await service.prisma.card.findUniqueOrThrow({ where: { id: res.body.id } });
      expect(row).toMatchObject({
        last4: providerCard.card_number.slice(-4),
        expiry: providerCard.expiry,
        currency: 'XAF',
        status: 'ACTIVE',
        providerCardId: providerCard.card_id,
      });
      expect(row.lastKnownBalance?.toFixed()).toBe('5000');
      const operation = await service.prisma.cardOperation.findUniqueOrThrow({ where: { id: res.body.operationId } });
      expect(operation).toMatchObject({
        kind: 'CREATE',
        status: 'SUCCEEDED',
        requestedBy: alice.sub,
        cardId: res.body.id,
        cardUserId: cardUser.id,
        currency: 'XAF',
      });
      expect(operation.completedAt).toBeInstanceOf(Date);
      expect(JSON.stringify(operation.providerResponse)).not.toContain(providerCard.card_number);
      expect(JSON.stringify(operation.providerResponse)).not.toContain(`"${providerCard.cvv}"`);
    });

    it('an EUR card: a numeric balance travels as the exact decimal string; a zero balance is accepted', async () => {
      const { body: cardUser } = await alice.createCardUser();
      const eur = await alice.createCard(cardUser.id, { balance: 12.5, currency: 'EUR' });
      expect(eur.status).toBe(201);
      expect(eur.body.balance).toBe('12.50');
      expect(requestsTo(`/api/action/card/${cardUser.providerUserId}`, 'POST').at(-1)!.body).toEqual({ balance: '12.50', currency: 'EUR' });
      const empty = await alice.createCard(cardUser.id, { balance: '0', currency: 'USD' });
      expect(empty.status).toBe(201);
      expect(empty.body.balance).toBe('0.00');
    });

    it('a replayed card creation answers the card without number and CVV, says so, and does not ask the provider again', async () => {
      const { body: cardUser } = await alice.createCardUser();
      const key = randomUUID();
      const calls = () => requestsTo(`/api/action/card/${cardUser.providerUserId}`, 'POST').length;
      const first = await alice.createCard(cardUser.id, { balance: '100', currency: 'XAF' }, key);
      expect(first.status).toBe(201);
      expect(first.body.cardNumber).toMatch(/^\d{16}$/);
      const replay = await alice.createCard(cardUser.id, { balance: '100', currency: 'XAF' }, key);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers['cache-control']).toBe('no-store');
      expect(replay.body).not.toHaveProperty('cardNumber');
      expect(replay.body).not.toHaveProperty('cvv');
      expect(replay.body).toMatchObject({
        id: first.body.id,
        last4: first.body.last4,
        maskedNumber: first.body.maskedNumber,
        secretsShownOnce: true,
        note: 'cardNumber and cvv are shown only in the first answer',
      });
      expect(JSON.stringify(replay.body)).not.toContain(first.body.cardNumber);
      expect(calls()).toBe(1);
      const stored = await service.prisma.idempotencyRecord.findMany({ where: { key } });
      expect(JSON.stringify(stored)).not.toContain(first.body.cardNumber);
    });

    it('GET /v1/cards/{id} refreshes status and balance from the provider, the number masked', async () => {
      const { card } = await userWithCard(alice);
      sandbox.state.cards.get(card.providerCardId)!.balanceMinor = 4321n;
      const res = await alice.getCard(card.id);
      expect(res.status).toBe(200);
      const req = requestsTo(`/api/action/card/${card.providerCardId}`, 'GET').at(-1)!;
      expectProviderAuth(req);
      expect(res.body).toMatchObject({
        id: card.id,
        maskedNumber: `**** **** **** ${card.last4}`,
        balance: '4321',
        status: 'ACTIVE',
        currency: 'XAF',
        refreshed: true,
        balanceSyncedAt: expect.any(String),
      });
      expect(res.body).not.toHaveProperty('cardNumber');
      expect(res.body).not.toHaveProperty('cvv');
      expect(JSON.stringify(res.body)).not.toContain(card.cardNumber);
      expect((await service.prisma.card.findUniqueOrThrow({ where: { id: card.id } })).lastKnownBalance?.toFixed()).toBe('4321');

      // A card frozen at the provider shows FROZEN on the next read.
      sandbox.state.cards.get(card.providerCardId)!.status = 'disabled';
      expect((await alice.getCard(card.id)).body.status).toBe('FROZEN');
    });

    it('GET /v1/cards lists own cards, filtered by card user, with cursor pagination', async () => {
      const dave = await cardsClient(service);
      const { cardUser, card: first } = await userWithCard(dave);
      const second = (await dave.createCard(cardUser.id, { balance: '1', currency: 'XAF' })).body;
      const other = await userWithCard(dave);
      const all = await dave.listCards();
      expect(all.body.items.map((c: { id: string }) => c.id)).toEqual([other.card.id, second.id, first.id]);
      expect(all.body.items.every((c: Record<string, unknown>) => !('cardNumber' in c) && !('cvv' in c))).toBe(true);
      const byUser = await dave.listCards({ cardUserId: cardUser.id, limit: '1' });
      expect(byUser.body.items.map((c: { id: string }) => c.id)).toEqual([second.id]);
      const next = await dave.listCards({ cardUserId: cardUser.id, limit: '1', cursor: byUser.body.nextCursor });
      expect(next.body).toEqual({ items: [expect.objectContaining({ id: first.id })], nextCursor: null });
    });
  });
});
