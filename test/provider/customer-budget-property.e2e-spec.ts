import fc from 'fast-check';
import { AgentBudgetRepository } from '../../src/provider/agent-budget.repository';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { customerCount, emptyBudgets, merchantCount, setBudgetRow } from './budget-counts';

const CUSTOMERS = ['c1', 'c2', 'c3', 'c4'];

/**
 * The take statement itself (agentBudgetTakeCte), on the test database, against any sequence of
 * waves of takes by several customers with any limits: no customer ever exceeds its share, the
 * merchant-wide total never exceeds its limit, and each customer's count is exactly what it was
 * granted (refused takes count nothing for the customer). Two instances (two pools) take at once.
 */
describe('customer shares of the provider budget, for any sequence of takes', () => {
  let sandbox: RunningSandbox;
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    [a, b] = await Promise.all([startTestService(sandbox), startTestService(sandbox)]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await sandbox.close();
  });

  const reset = async () => {
    await emptyBudgets(a.prisma);
    await a.prisma.customerLimit.deleteMany();
  };

  it('no customer exceeds its limit, the merchant total never exceeds its own, customer counts are exact', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          merchantLimit: fc.integer({ min: 1, max: 25 }),
          defaultLimit: fc.integer({ min: 1, max: 8 }),
          overrides: fc.dictionary(fc.constantFrom(...CUSTOMERS), fc.integer({ min: 0, max: 8 })),
          // Each wave: takes sent at once, by a customer (or null: staff / a background job), on instance a or b.
          waves: fc.array(fc.array(fc.record({ customer: fc.constantFrom(null, ...CUSTOMERS), onB: fc.boolean() }), { maxLength: 8 }), {
            minLength: 1,
            maxLength: 6,
          }),
        }),
        async ({ merchantLimit, defaultLimit, overrides, waves }) => {
          await reset();
          for (const [subject, calls] of Object.entries(overrides)) {
            await a.prisma.customerLimit.create({ data: { subject, providerCallsPerHour: calls, note: 'property', setBy: 'test' } });
          }
          const limitOf = (customer: string) => overrides[customer] ?? defaultLimit;
          const granted = new Map<string | null, number>();
          const refusedBy = new Map<string, Set<string>>();
          for (const wave of waves) {
            const decisions = await Promise.all(
              wave.map(({ customer, onB }) =>
                (onB ? b : a).get(AgentBudgetRepository).take({ hourlyLimit: merchantLimit, customer, customerHourlyLimit: defaultLimit }),
              ),
            );
            decisions.forEach((decision, i) => {
              const { customer } = wave[i];
              if (decision.granted) granted.set(customer, (granted.get(customer) ?? 0) + 1);
              else if (customer !== null) refusedBy.set(customer, (refusedBy.get(customer) ?? new Set()).add(decision.refusedBy));
              if (!decision.granted && customer === null) expect(decision.refusedBy).toBe('merchant');
            });
          }
          const merchant = await merchantCount(a.prisma);
          const total = [...granted.values()].reduce((sum, n) => sum + n, 0);
          expect(total).toBeLessThanOrEqual(merchantLimit);
          expect(merchant).toBeLessThanOrEqual(merchantLimit);
          expect(merchant).toBeGreaterThanOrEqual(total);
          for (const customer of CUSTOMERS) {
            const mine = granted.get(customer) ?? 0;
            expect(mine).toBeLessThanOrEqual(limitOf(customer));
            expect(await customerCount(a.prisma, customer)).toBe(mine);
            // Refused for its own share only once that share was spent.
            if (refusedBy.get(customer)?.has('customer')) expect(mine).toBe(limitOf(customer));
          }
        },
      ),
      { numRuns: 40 },
    );
    await reset();
    // 40 runs of up to 48 takes on two instances: about 30 s on a loaded 2-core machine.
  }, 120_000);

  it("the sweep removes a customer's row once all its calls left the rolling hour, and keeps the counted ones", async () => {
    await reset();
    await setBudgetRow(a.prisma, { customer: 'c1' }, [{ minutesAgo: 61, calls: 4 }]);
    await setBudgetRow(a.prisma, { customer: 'c2' }, [
      { minutesAgo: 62, calls: 4 },
      { minutesAgo: 59, calls: 2 },
    ]);
    await setBudgetRow(a.prisma, { customer: 'c3' }, [{ minutesAgo: 0, calls: 1 }]);
    expect(await a.get(AgentBudgetRepository).sweep()).toBe(1);
    expect((await a.prisma.customerBudget.findMany({ orderBy: { subject: 'asc' } })).map((row) => row.subject)).toEqual(['c2', 'c3']);
    expect([await customerCount(a.prisma, 'c2'), await customerCount(a.prisma, 'c3')]).toEqual([2, 1]);
    await reset();
  });
});
