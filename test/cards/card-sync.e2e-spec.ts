import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, userWithCard, type CardsClientOf } from '../support/cards-factories';
import type { TestService } from '../support/test-service';
import { useCardsService } from './cards-harness';

/**
 * POST /v1/cards/{id}/sync, the provider operation added by following
 * docs/guides/adding-a-provider-operation.md: the card re-read from the provider (its card details),
 * recorded as a SYNC operation, against the sandbox (see cards-harness.ts).
 */
describe('POST /v1/cards/{id}/sync', () => {
  const context = useCardsService();
  const { expectProviderAuth } = context;
  let sandbox: RunningSandbox;
  let service: TestService;
  let alice: CardsClientOf;
  beforeAll(() => ({ sandbox, service, alice } = context));

  const sync = (client: CardsClientOf, id: string, key: string = randomUUID()) =>
    request(service.server).post(`/v1/cards/${id}/sync`).auth(client.token, { type: 'bearer' }).set('Idempotency-Key', key).send();
  /** The provider's card-details calls for a card (GET /api/action/card/{providerCardId}). */
  const detailCalls = (providerCardId: string) => context.requestsTo(`/api/action/card/${providerCardId}`, 'GET');

  it('reads the card at the provider, updates it and records the balance change as a SYNC operation', async () => {
    const { card } = await userWithCard(alice, { balance: '20.00', currency: 'EUR' });
    // The provider's side moved without us: the balance went up, the card was disabled.
    const providerCard = sandbox.state.cards.get(card.providerCardId)!;
    providerCard.balanceMinor = 2575n;
    providerCard.status = 'disabled';

    const res = await sync(alice, card.id);
    expect(res.status).toBe(200);
    const calls = detailCalls(card.providerCardId);
    expect(calls).toHaveLength(1);
    expectProviderAuth(calls[0]);
    expect(res.body).toMatchObject({
      operationId: expect.any(String),
      kind: 'SYNC',
      status: 'SUCCEEDED',
      cardId: card.id,
      requestedBy: alice.sub,
      currency: 'EUR',
      amount: '5.75',
      newBalance: '25.75',
      previousBalance: '20.00',
      cardStatus: 'FROZEN',
      failureReason: null,
      completedAt: expect.any(String),
    });

    const operation = await service.prisma.cardOperation.findUniqueOrThrow({ where: { id: res.body.operationId } });
    expect(operation).toMatchObject({ kind: 'SYNC', status: 'SUCCEEDED', cardId: card.id, requestedBy: alice.sub });
    expect(operation.amount?.toFixed()).toBe('5.75');
    expect(operation.newBalance?.toFixed()).toBe('25.75');
    // The card details carry the full number: the stored answer never does.
    expect(JSON.stringify(operation.providerResponse)).not.toContain(providerCard.card_number);
    const stored = await service.prisma.card.findUniqueOrThrow({ where: { id: card.id } });
    expect(stored.lastKnownBalance?.toFixed()).toBe('25.75');
    expect(stored.status).toBe('FROZEN');

    const listed = await alice.cardOperations(card.id, { kind: 'SYNC' });
    expect(listed.body.items.map((o: { operationId: string }) => o.operationId)).toEqual([res.body.operationId]);
  });

  it('a balance that went down is a negative change; a second sync that finds nothing new records a zero change', async () => {
    const { card } = await userWithCard(alice);
    sandbox.state.cards.get(card.providerCardId)!.balanceMinor = 4200n;
    const first = await sync(alice, card.id);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ amount: '-800', newBalance: '4200', previousBalance: '5000', cardStatus: 'ACTIVE' });
    const second = await sync(alice, card.id);
    expect(second.body).toMatchObject({ amount: '0', newBalance: '4200', previousBalance: '4200' });
    expect(second.body.operationId).not.toBe(first.body.operationId);
  });

  it('a provider timeout leaves a visible UNKNOWN SYNC operation and the card as it was; a retry with the key does not resend', async () => {
    const { card } = await userWithCard(alice);
    sandbox.state.cards.get(card.providerCardId)!.balanceMinor = 9000n;
    sandbox.state.injectFault({ path: `/api/action/card/${card.providerCardId}`, method: 'GET', delayMs: 1500 });
    const key = randomUUID();
    const res = await sync(alice, card.id, key);
    expect(res.status).toBe(504);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
    expect(res.body).toMatchObject({
      code: 'provider_timeout',
      outcomeKnown: false,
      operationId: expect.any(String),
      operationStatus: 'UNKNOWN',
    });
    const operation = await alice.operation(res.body.operationId);
    expect(operation.body).toMatchObject({ kind: 'SYNC', status: 'UNKNOWN', cardId: card.id, amount: null, newBalance: null });
    expect((await service.prisma.card.findUniqueOrThrow({ where: { id: card.id } })).lastKnownBalance?.toFixed()).toBe('5000');

    const retry = await sync(alice, card.id, key);
    expect(retry.status).toBe(504);
    expect(retry.body.operationId).toBe(res.body.operationId);
    expect(detailCalls(card.providerCardId)).toHaveLength(1);
  });

  it("another customer's card is 404, and the provider hears nothing; an admin may sync it", async () => {
    const { card } = await userWithCard(alice);
    const bob = await cardsClient(service);
    const res = await sync(bob, card.id);
    expect(res.status).toBe(404);
    expect(detailCalls(card.providerCardId)).toHaveLength(0);
    expect(await service.prisma.cardOperation.count({ where: { cardId: card.id, kind: 'SYNC' } })).toBe(0);

    const admin = await cardsClient(service, `adm_${randomUUID().slice(0, 8)}`, 'admin');
    const byAdmin = await sync(admin, card.id);
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body).toMatchObject({ kind: 'SYNC', status: 'SUCCEEDED', requestedBy: admin.sub });
  });

  it('idempotent: a replay with the same key answers the first answer without asking again; the key is required', async () => {
    const { card } = await userWithCard(alice);
    const key = randomUUID();
    const first = await sync(alice, card.id, key);
    expect(first.status).toBe(200);
    const replay = await sync(alice, card.id, key);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(detailCalls(card.providerCardId)).toHaveLength(1);
    expect(await service.prisma.cardOperation.count({ where: { cardId: card.id, kind: 'SYNC' } })).toBe(1);

    const keyless = await request(service.server).post(`/v1/cards/${card.id}/sync`).auth(alice.token, { type: 'bearer' }).send();
    expect(keyless.status).toBe(400);
    expect(keyless.body.code).toBe('idempotency_key_required');
    expect(detailCalls(card.providerCardId)).toHaveLength(1);
  });

  it('a terminated card is refused (409 card_terminated) before anything is stored or sent', async () => {
    const { card } = await userWithCard(alice);
    expect((await alice.terminate(card.id)).status).toBe(200);
    const res = await sync(alice, card.id);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('card_terminated');
    expect(detailCalls(card.providerCardId)).toHaveLength(0);
    expect(await service.prisma.cardOperation.count({ where: { cardId: card.id, kind: 'SYNC' } })).toBe(0);
  });
});
