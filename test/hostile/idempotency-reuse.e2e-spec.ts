import { randomUUID } from 'node:crypto';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, userWithCard } from '../support/cards-factories';
import { customer } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * An Idempotency-Key reused on another resource must never replay the first request's answer: the
 * second money movement would silently not happen while the client is told it did.
 */
describe('an Idempotency-Key reused on another resource', () => {
  let sandbox: RunningSandbox;
  let service: TestService;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  const cardCalls = (providerCardId: string) => sandbox.state.requestsTo(`/api/action/card/transaction/${providerCardId}`);

  it('tops up card B with the key of card A: 422 idempotency_key_reused, B untouched, no provider call', async () => {
    const alice = await cardsClient(service);
    const { card: cardA } = await userWithCard(alice);
    const { card: cardB } = await userWithCard(alice);
    const key = randomUUID();

    const first = await alice.topUp(cardA.id, '100', key);
    expect(first.status).toBe(200);
    const second = await alice.topUp(cardB.id, '100', key);
    expect(second.status).toBe(422);
    expect(second.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(second.body).toMatchObject({ code: 'idempotency_key_reused' });
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(cardCalls(cardB.providerCardId)).toHaveLength(0);
    expect((await alice.cardOperations(cardB.id)).body.items.filter((o: { kind: string }) => o.kind === 'TOPUP')).toHaveLength(0);

    // The key still answers card A's top-up, as a replay.
    const replay = await alice.topUp(cardA.id, '100', key);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('withdraws from card B with the key of a withdrawal from card A: 422', async () => {
    const alice = await cardsClient(service);
    const { card: cardA } = await userWithCard(alice);
    const { card: cardB } = await userWithCard(alice);
    const key = randomUUID();
    expect((await alice.withdraw(cardA.id, '10', key)).status).toBe(200);
    const res = await alice.withdraw(cardB.id, '10', key);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('idempotency_key_reused');
    expect(cardCalls(cardB.providerCardId)).toHaveLength(0);
  });

  it('creates a card under card user B with the key of a card of card user A: 422, no card for B', async () => {
    const alice = await cardsClient(service);
    const userA = (await alice.createCardUser()).body;
    const userB = (await alice.createCardUser()).body;
    const key = randomUUID();
    const body = { balance: '1000', currency: 'XAF' };

    expect((await alice.createCard(userA.id, body, key)).status).toBe(201);
    const res = await alice.createCard(userB.id, body, key);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('idempotency_key_reused');
    expect(sandbox.state.requestsTo(`/api/action/card/${userB.providerUserId}`, 'POST')).toHaveLength(0);
    expect((await alice.listCards({ cardUserId: userB.id })).body.items).toHaveLength(0);
  });

  it('still replays the same request on the same resource, and keeps keys per user', async () => {
    const alice = await customer(service);
    const bob = await customer(service);
    const key = randomUUID();
    const first = await alice.createOrder({}, key);
    expect(first.status).toBe(201);
    const replay = await alice.createOrder({}, key);
    expect(replay.status).toBe(201);
    expect(replay.body.id).toBe(first.body.id);
    const bobs = await bob.createOrder({}, key);
    expect(bobs.status).toBe(201);
    expect(bobs.body.id).not.toBe(first.body.id);
  });
});
