import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { userWithCard, type CardsClientOf } from '../support/cards-factories';
import type { TestService } from '../support/test-service';
import { PARAMS, useCardsService } from './cards-harness';

/** The card routes against the sandbox, asserted on the wire: see cards-harness.ts. */
describe('virtual cards end to end', () => {
  const context = useCardsService();
  const { operationCalls, cardCalls, expectProviderAuth } = context;
  let sandbox: RunningSandbox;
  let service: TestService;
  let alice: CardsClientOf;
  beforeAll(() => ({ sandbox, service, alice } = context));

  describe('operations', () => {
    it('top-up: GET card/transaction/{id} with the configured parameter names; answers operationId, newBalance, providerTransactionId', async () => {
      const { card } = await userWithCard(alice);
      const res = await alice.topUp(card.id, '2500');
      expect(res.status).toBe(200);
      const calls = operationCalls(card.providerCardId);
      expect(calls).toHaveLength(1);
      expectProviderAuth(calls[0]);
      expect(calls[0].query).toEqual({ [PARAMS.operation]: 'topup', [PARAMS.amount]: '2500', [PARAMS.currency]: 'XAF' });
      expect(calls[0].body).toBeNull();

      const tx = sandbox.state.cards.get(card.providerCardId)!.transactions.at(-1)!;
      expect(res.body).toMatchObject({
        operationId: expect.any(String),
        newBalance: '7500',
        providerTransactionId: tx.transaction_id,
        kind: 'TOPUP',
        status: 'SUCCEEDED',
        amount: '2500',
        currency: 'XAF',
        requestedBy: alice.sub,
        cardStatus: 'ACTIVE',
      });
      const operation = await service.prisma.cardOperation.findUniqueOrThrow({ where: { id: res.body.operationId } });
      expect(operation).toMatchObject({
        kind: 'TOPUP',
        status: 'SUCCEEDED',
        requestedBy: alice.sub,
        cardId: card.id,
        providerTransactionId: tx.transaction_id,
        failureReason: null,
      });
      expect(operation.amount?.toFixed()).toBe('2500');
      expect(operation.newBalance?.toFixed()).toBe('7500');
      expect(operation.providerResponse).toEqual({ new_balance: '7500', transaction_id: tx.transaction_id });
      expect(operation.completedAt!.getTime()).toBeGreaterThanOrEqual(operation.createdAt.getTime());
      expect((await service.prisma.card.findUniqueOrThrow({ where: { id: card.id } })).lastKnownBalance?.toFixed()).toBe('7500');
    });

    it('withdraw: the same, and a provider refusal is a FAILED operation answered 422 with its reason and id', async () => {
      const { card } = await userWithCard(alice, { balance: '20.00', currency: 'EUR' });
      const res = await alice.withdraw(card.id, 7.5);
      expect(res.status).toBe(200);
      expect(operationCalls(card.providerCardId).at(-1)!.query).toEqual({
        [PARAMS.operation]: 'withdraw',
        [PARAMS.amount]: '7.50',
        [PARAMS.currency]: 'EUR',
      });
      expect(res.body).toMatchObject({
        newBalance: '12.50',
        kind: 'WITHDRAW',
        amount: '7.50',
        status: 'SUCCEEDED',
        providerTransactionId: expect.any(String),
      });

      const refused = await alice.withdraw(card.id, '100');
      expect(refused.status).toBe(422);
      expect(refused.headers['content-type']).toMatch(/problem\+json/);
      expect(refused.body).toMatchObject({
        code: 'provider_rejected',
        providerMessage: 'Insufficient balance',
        operationId: expect.any(String),
        operationStatus: 'FAILED',
        outcomeKnown: true,
      });
      const failed = await alice.operation(refused.body.operationId);
      expect(failed.body).toMatchObject({
        kind: 'WITHDRAW',
        status: 'FAILED',
        failureReason: 'Insufficient balance',
        amount: '100.00',
        completedAt: expect.any(String),
      });
    });

    it('freeze and unfreeze: disabled / enabled at the provider; money does not move on a frozen card; asking twice is harmless', async () => {
      const { card } = await userWithCard(alice);
      const frozen = await alice.freeze(card.id);
      expect(frozen.status).toBe(200);
      expect(frozen.body).toMatchObject({ kind: 'FREEZE', status: 'SUCCEEDED', cardStatus: 'FROZEN', operationId: expect.any(String) });
      expect(operationCalls(card.providerCardId).at(-1)!.query).toEqual({ [PARAMS.operation]: 'disabled' });
      expectProviderAuth(operationCalls(card.providerCardId).at(-1)!);
      expect(sandbox.state.cards.get(card.providerCardId)!.status).toBe('disabled');

      const again = await alice.freeze(card.id);
      expect(again.status).toBe(200);
      expect(again.body.cardStatus).toBe('FROZEN');

      const calls = operationCalls(card.providerCardId).length;
      const topUp = await alice.topUp(card.id, '10');
      expect(topUp.status).toBe(409);
      expect(topUp.body.code).toBe('card_frozen');
      expect(operationCalls(card.providerCardId)).toHaveLength(calls);

      const thawed = await alice.unfreeze(card.id);
      expect(thawed.status).toBe(200);
      expect(thawed.body).toMatchObject({ kind: 'UNFREEZE', cardStatus: 'ACTIVE' });
      expect(operationCalls(card.providerCardId).at(-1)!.query).toEqual({ [PARAMS.operation]: 'enabled' });
      expect((await alice.topUp(card.id, '10')).status).toBe(200);
      expect((await alice.getCard(card.id)).body.status).toBe('ACTIVE');
    });

    it('terminate asks nothing more, cannot be undone: every later operation is 409 card_terminated, unsent', async () => {
      const { card } = await userWithCard(alice);
      const res = await alice.terminate(card.id);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ kind: 'TERMINATE', status: 'SUCCEEDED', cardStatus: 'TERMINATED' });
      expect(operationCalls(card.providerCardId).at(-1)!.query).toEqual({ [PARAMS.operation]: 'terminate' });

      const before = cardCalls().length;
      const refusals = [
        await alice.topUp(card.id, '10'),
        await alice.withdraw(card.id, '10'),
        await alice.freeze(card.id),
        await alice.unfreeze(card.id),
        await alice.terminate(card.id),
      ];
      for (const refusal of refusals) {
        expect(refusal.status).toBe(409);
        expect(refusal.headers['content-type']).toMatch(/problem\+json/);
        expect(refusal.body).toMatchObject({ code: 'card_terminated', cardId: card.id, detail: expect.stringMatching(/terminated/) });
      }
      // Reading the card asks the provider nothing either: a terminated card cannot change.
      const read = await alice.getCard(card.id);
      expect(read.body).toMatchObject({ status: 'TERMINATED', terminatedAt: expect.any(String), refreshed: false });
      expect(cardCalls()).toHaveLength(before);
      // Refusals are not operations: only the creation and the termination are stored.
      const operations = await service.prisma.cardOperation.findMany({ where: { cardId: card.id }, orderBy: { createdAt: 'asc' } });
      expect(operations.map((o) => o.kind)).toEqual(['CREATE', 'TERMINATE']);

      // Even a provider claiming it active again does not revive it.
      sandbox.state.cards.get(card.providerCardId)!.status = 'active';
      expect((await alice.getCard(card.id)).body.status).toBe('TERMINATED');
      // The history stays readable.
      expect((await alice.transactions(card.id)).status).toBe(200);
    });

    it('GET /v1/cards/{id}/transactions: the provider history, mapped and paged, recorded as a TRANSACTIONS operation', async () => {
      const { card } = await userWithCard(alice);
      await alice.topUp(card.id, '100');
      await alice.withdraw(card.id, '40');
      const res = await alice.transactions(card.id, { limit: '1' });
      expect(res.status).toBe(200);
      expect(operationCalls(card.providerCardId).at(-1)!.query).toEqual({ [PARAMS.operation]: 'transactions' });
      const [topup] = sandbox.state.cards.get(card.providerCardId)!.transactions;
      expect(res.body).toEqual({
        cardId: card.id,
        operationId: expect.any(String),
        items: [
          {
            transactionId: topup.transaction_id,
            type: 'topup',
            amount: '100',
            currency: 'XAF',
            balanceAfter: '5100',
            createdAt: topup.created_at,
          },
        ],
        nextCursor: expect.any(String),
      });
      const next = await alice.transactions(card.id, { limit: '1', cursor: res.body.nextCursor });
      expect(next.body.items).toEqual([expect.objectContaining({ type: 'withdraw', amount: '40', balanceAfter: '5060' })]);
      expect(next.body.nextCursor).toBeNull();
      expect((await alice.operation(res.body.operationId)).body).toMatchObject({
        kind: 'TRANSACTIONS',
        status: 'SUCCEEDED',
        requestedBy: alice.sub,
      });
    });

    it('GET /v1/cards/{id}/operations and /v1/card-users/{id}/operations: who asked what, newest first', async () => {
      const { cardUser, card } = await userWithCard(alice);
      await alice.topUp(card.id, '1');
      await alice.freeze(card.id);
      const ops = await alice.cardOperations(card.id);
      expect(ops.status).toBe(200);
      expect(ops.body.items.map((o: { kind: string }) => o.kind)).toEqual(['FREEZE', 'TOPUP', 'CREATE']);
      expect(
        ops.body.items.every((o: { requestedBy: string; status: string }) => o.requestedBy === alice.sub && o.status === 'SUCCEEDED'),
      ).toBe(true);
      const topups = await alice.cardOperations(card.id, { kind: 'TOPUP' });
      expect(topups.body.items).toHaveLength(1);
      const byUser = await alice.cardUserOperations(cardUser.id, { limit: '2' });
      expect(byUser.body.items.map((o: { kind: string }) => o.kind)).toEqual(['FREEZE', 'TOPUP']);
      expect(byUser.body.nextCursor).toEqual(expect.any(String));
    });
  });
});
