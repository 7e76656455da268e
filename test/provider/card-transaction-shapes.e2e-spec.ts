import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { TRANSACTION_ENVELOPES } from '../../src/sandbox/sandbox.faults';
import { cardsClient, userWithCard, type CardsClientOf } from '../support/cards-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * The provider does not document the shape of the card transaction listing: every usual envelope
 * is read, and a read that succeeded is never answered 502 (an unknown shape is an empty list and
 * a warning in the log).
 */
describe('card transaction listing shapes', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let alice: CardsClientOf;
  let card: Record<string, any>;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    alice = await cardsClient(service);
    ({ card } = await userWithCard(alice));
    expect((await alice.topUp(card.id, '1000')).status).toBe(200);
    expect((await alice.withdraw(card.id, '250')).status).toBe(200);
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  it.each(TRANSACTION_ENVELOPES.map((envelope) => [envelope === '' ? 'a bare array' : envelope, envelope] as const))(
    '%s',
    async (_name, envelope) => {
      sandbox.state.injectFault({ path: `/api/action/card/transaction/${card.providerCardId}`, transactionsEnvelope: envelope });
      const res = await alice.transactions(card.id);
      expect(res.status).toBe(200);
      expect(res.body.items.map((t: Record<string, unknown>) => [t.type, t.amount, t.balanceAfter])).toEqual([
        ['topup', '1000', '6000'],
        ['withdraw', '250', '5750'],
      ]);
      expect((await alice.operation(res.body.operationId)).body).toMatchObject({ kind: 'TRANSACTIONS', status: 'SUCCEEDED' });
    },
  );

  it('an unknown shape: 200 with an empty list, the operation SUCCEEDED, a warning naming the keys (not the values)', async () => {
    sandbox.state.injectFault({
      path: `/api/action/card/transaction/${card.providerCardId}`,
      status: 200,
      body: { history: [{ transaction_id: 'x-secret-looking-value' }], count: 1 },
    });
    const res = await alice.transactions(card.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ items: [], nextCursor: null });
    expect((await alice.operation(res.body.operationId)).body).toMatchObject({ status: 'SUCCEEDED' });
    const warning = service.logs.entries().find((line) => String(line.msg).startsWith('card transaction listing in an unknown shape'));
    expect(warning).toMatchObject({ level: 'warn', keys: ['history', 'count'] });
    expect(JSON.stringify(warning)).not.toContain('x-secret-looking-value');
  });
});
