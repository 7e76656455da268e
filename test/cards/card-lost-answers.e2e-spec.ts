import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { userWithCard, type CardsClientOf } from '../support/cards-factories';
import type { TestService } from '../support/test-service';
import { useCardsService } from './cards-harness';

/** The card routes against the sandbox, asserted on the wire: see cards-harness.ts. */
describe('virtual cards end to end', () => {
  const context = useCardsService();
  const { operationCalls } = context;
  let sandbox: RunningSandbox;
  let service: TestService;
  let alice: CardsClientOf;
  beforeAll(() => ({ sandbox, service, alice } = context));

  describe('idempotency and lost answers', () => {
    it('10 concurrent top-ups with one key: one provider call, one operation, one answer', async () => {
      const { card } = await userWithCard(alice);
      const key = randomUUID();
      const answers = await Promise.all(Array.from({ length: 10 }, () => alice.topUp(card.id, '300', key)));
      expect(operationCalls(card.providerCardId)).toHaveLength(1);
      const ok = answers.filter((a) => a.status === 200);
      expect(ok.length).toBeGreaterThanOrEqual(1);
      expect(new Set(ok.map((a) => a.body.operationId)).size).toBe(1);
      for (const other of answers.filter((a) => a.status !== 200)) expect(other.body.code).toBe('idempotency_in_progress');
      expect(await service.prisma.cardOperation.count({ where: { cardId: card.id, kind: 'TOPUP' } })).toBe(1);
      expect(sandbox.state.cards.get(card.providerCardId)!.balanceMinor).toBe(5300n);

      const later = await alice.topUp(card.id, '300', key);
      expect(later.status).toBe(200);
      expect(later.headers['idempotent-replayed']).toBe('true');
      expect(later.body).toEqual(ok[0].body);
      expect(operationCalls(card.providerCardId)).toHaveLength(1);
      const reused = await alice.topUp(card.id, '301', key);
      expect(reused.status).toBe(422);
      expect(reused.body.code).toBe('idempotency_key_reused');
    });

    it('a top-up needs an Idempotency-Key', async () => {
      const { card } = await userWithCard(alice);
      const res = await request(service.server)
        .post(`/v1/cards/${card.id}/topup`)
        .auth(alice.token, { type: 'bearer' })
        .send({ amount: '1' });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('idempotency_key_required');
      expect(operationCalls(card.providerCardId)).toHaveLength(0);
    });

    it('a provider timeout leaves a visible UNKNOWN operation; the answer is 504 with its id; a retry with the key does not resend', async () => {
      const { card } = await userWithCard(alice);
      sandbox.state.injectFault({ path: `/api/action/card/transaction/${card.providerCardId}`, delayMs: 1500 });
      const key = randomUUID();
      const res = await alice.topUp(card.id, '900', key);
      expect(res.status).toBe(504);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(res.body).toMatchObject({
        code: 'provider_timeout',
        outcomeKnown: false,
        operationId: expect.any(String),
        operationStatus: 'UNKNOWN',
      });
      expect(res.body.detail).toContain(res.body.operationId);

      const operation = await alice.operation(res.body.operationId);
      expect(operation.status).toBe(200);
      expect(operation.body).toMatchObject({
        kind: 'TOPUP',
        status: 'UNKNOWN',
        amount: '900',
        requestedBy: alice.sub,
        cardId: card.id,
        completedAt: expect.any(String),
        failureReason: expect.stringMatching(/unknown/),
      });
      expect(
        (await alice.cardOperations(card.id, { status: 'UNKNOWN' })).body.items.map((o: { operationId: string }) => o.operationId),
      ).toEqual([res.body.operationId]);

      const retry = await alice.topUp(card.id, '900', key);
      expect(retry.status).toBe(504);
      expect(retry.body.operationId).toBe(res.body.operationId);
      expect(operationCalls(card.providerCardId)).toHaveLength(1);
    });

    it('a 500 from the provider is UNKNOWN too (502), never FAILED', async () => {
      const { card } = await userWithCard(alice);
      sandbox.state.injectFault({
        path: `/api/action/card/transaction/${card.providerCardId}`,
        status: 500,
        rawBody: '<html>boom</html>',
        contentType: 'text/html',
      });
      const res = await alice.withdraw(card.id, '5');
      expect(res.status).toBe(502);
      expect(res.body).toMatchObject({ code: 'provider_unavailable', operationStatus: 'UNKNOWN' });
      expect((await alice.operation(res.body.operationId)).body.status).toBe('UNKNOWN');
    });

    it('a card creation that times out leaves an UNKNOWN CREATE operation on the card user, without a card', async () => {
      const { body: cardUser } = await alice.createCardUser();
      sandbox.state.injectFault({ path: `/api/action/card/${cardUser.providerUserId}`, method: 'POST', delayMs: 1500 });
      const res = await alice.createCard(cardUser.id, { balance: '10', currency: 'XAF' });
      expect(res.status).toBe(504);
      expect(res.body).toMatchObject({ code: 'provider_timeout', operationStatus: 'UNKNOWN', operationId: expect.any(String) });
      expect(res.body).not.toHaveProperty('cardNumber');
      const ops = await alice.cardUserOperations(cardUser.id);
      expect(ops.body.items).toEqual([
        expect.objectContaining({
          operationId: res.body.operationId,
          kind: 'CREATE',
          status: 'UNKNOWN',
          cardId: null,
          amount: '10',
          currency: 'XAF',
        }),
      ]);
      expect(await service.prisma.card.count({ where: { cardUserId: cardUser.id } })).toBe(0);
    });
  });
});
