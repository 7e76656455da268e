import fc from 'fast-check';
import { AgentBudgetRepository } from '../../src/provider/agent-budget.repository';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

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
    await a.prisma.agentBudgetBucket.deleteMany();
    await a.prisma.customerBudgetBucket.deleteMany();
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
          const merchantCount = (await a.prisma.agentBudgetBucket.aggregate({ _sum: { used: true } }))._sum.used ?? 0;
          const total = [...granted.values()].reduce((sum, n) => sum + n, 0);
          expect(total).toBeLessThanOrEqual(merchantLimit);
          expect(merchantCount).toBeLessThanOrEqual(merchantLimit);
          expect(merchantCount).toBeGreaterThanOrEqual(total);
          for (const customer of CUSTOMERS) {
            const mine = granted.get(customer) ?? 0;
            expect(mine).toBeLessThanOrEqual(limitOf(customer));
            const counted =
              (await a.prisma.customerBudgetBucket.aggregate({ where: { subject: customer }, _sum: { used: true } }))._sum.used ?? 0;
            expect(counted).toBe(mine);
            // Refused for its own share only once that share was spent.
            if (refusedBy.get(customer)?.has('customer')) expect(mine).toBe(limitOf(customer));
          }
        },
      ),
      { numRuns: 40 },
    );
    await reset();
  });

  it("the sweep removes a customer's buckets once they leave the rolling hour, and keeps the counted ones", async () => {
    await reset();
    const minute = (minutesAgo: number) => new Date(Math.floor(Date.now() / 60_000) * 60_000 - minutesAgo * 60_000);
    await a.prisma.customerBudgetBucket.createMany({
      data: [
        { subject: 'c1', bucket: minute(62), used: 4 },
        { subject: 'c1', bucket: minute(59), used: 2 },
        { subject: 'c2', bucket: minute(0), used: 1 },
      ],
    });
    expect(await a.get(AgentBudgetRepository).sweep()).toBe(1);
    expect((await a.prisma.customerBudgetBucket.findMany({ orderBy: { bucket: 'asc' } })).map((b) => [b.subject, b.used])).toEqual([
      ['c1', 2],
      ['c2', 1],
    ]);
    await reset();
  });
});
