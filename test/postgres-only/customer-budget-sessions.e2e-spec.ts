import { Client } from 'pg';
import { agentBudgetTakeCte, budgetSlotValues } from '../../src/provider/agent-budget-take';
import { AgentBudgetRepository } from '../../src/provider/agent-budget.repository';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { testDatabaseUrl } from '../support/test-database';
import { customerCount } from '../provider/budget-counts';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

const LIMIT = 3;
const slot = (customer: string) => ({ hourlyLimit: 600, customer, customerHourlyLimit: LIMIT });

/**
 * A customer's count across instances, proven with a second session taking as another instance
 * would, its transaction left open: a take of the same customer waits for it and counts it. Runs
 * only on a real PostgreSQL server (jest.config.js): PGlite is a single session.
 */
describe("a customer's share across instances", () => {
  let sandbox: RunningSandbox;
  let a: TestService;
  let b: TestService;
  let other: Client;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    [a, b] = await Promise.all([startTestService(sandbox), startTestService(sandbox)]);
  });
  beforeEach(async () => {
    other = new Client({ connectionString: testDatabaseUrl() });
    await other.connect();
    await other.query('BEGIN');
  });
  afterEach(async () => {
    await other.query('ROLLBACK').catch(() => undefined);
    await other.end();
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await sandbox.close();
  });

  /** The take statement, in the other session's open transaction. */
  const takeInOther = async (customer: string) =>
    (
      await other.query(
        `WITH ${agentBudgetTakeCte(1)} SELECT EXISTS (SELECT 1 FROM budget) AS granted FROM budget_share`,
        budgetSlotValues(slot(customer)),
      )
    ).rows[0].granted as boolean;
  const countOf = (customer: string) => customerCount(a.prisma, customer);
  const settledWithin = (promise: Promise<unknown>, ms: number) =>
    Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

  it('the last slot taken by another instance, not yet committed: a take waits for it, then is refused', async () => {
    const customer = `sess_${Date.now()}_1`;
    const repository = a.get(AgentBudgetRepository);
    for (let i = 0; i < LIMIT - 1; i++) expect((await repository.take(slot(customer))).granted).toBe(true);
    expect(await takeInOther(customer)).toBe(true);

    const waiting = repository.take(slot(customer));
    expect(await settledWithin(waiting, 500)).toBe(false);
    await other.query('COMMIT');
    const decision = await waiting;
    expect(decision).toMatchObject({ granted: false, refusedBy: 'customer' });
    expect(await countOf(customer)).toBe(LIMIT);
  });

  it('the other instance rolls back: the waiting take gets the slot it did not keep', async () => {
    const customer = `sess_${Date.now()}_2`;
    const repository = b.get(AgentBudgetRepository);
    for (let i = 0; i < LIMIT - 1; i++) expect((await repository.take(slot(customer))).granted).toBe(true);
    expect(await takeInOther(customer)).toBe(true);
    const waiting = repository.take(slot(customer));
    expect(await settledWithin(waiting, 500)).toBe(false);
    await other.query('ROLLBACK');
    expect((await waiting).granted).toBe(true);
    expect(await countOf(customer)).toBe(LIMIT);
  });

  it('two instances, 40 takes of one customer at once: exactly its limit granted and counted', async () => {
    const customer = `sess_${Date.now()}_3`;
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).get(AgentBudgetRepository).take(slot(customer))),
    );
    expect(decisions.filter((d) => d.granted)).toHaveLength(LIMIT);
    expect(decisions.filter((d) => !d.granted).every((d) => !d.granted && d.refusedBy === 'customer')).toBe(true);
    expect(await countOf(customer)).toBe(LIMIT);
  });
});
