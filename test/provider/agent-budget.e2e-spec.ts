import pino from 'pino';
import { AgentBudgetSweepJob } from '../../src/provider/agent-budget-sweep.job';
import { CardsClient } from '../../src/provider/clients/cards.client';
import { PayinClient } from '../../src/provider/clients/payin.client';
import { WalletLinkClient } from '../../src/provider/clients/wallet-link.client';
import { AgentBudgetExhaustedError } from '../../src/provider/provider.errors';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { payinBody, uniqueEmail } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { ProblemDetailsFilter } from '../../src/http/problem-details.filter';
import { emptyBudgets, merchantCount, setBudgetRow } from './budget-counts';

describe('the /api/agent/* hourly budget', () => {
  let sandbox: RunningSandbox;
  let a: TestService;
  let b: TestService;
  const LIMIT = 6;
  const taken = () => merchantCount(a.prisma);
  const agentRequests = () => sandbox.state.requests.filter((r) => r.path.startsWith('/api/agent/')).length;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    const env = { PROVIDER_AGENT_HOURLY_LIMIT: String(LIMIT) };
    [a, b] = await Promise.all([startTestService(sandbox, env), startTestService(sandbox, env)]);
  });
  beforeEach(async () => {
    await emptyBudgets(a.prisma);
  });
  afterAll(async () => {
    await emptyBudgets(a.prisma);
    await Promise.all([a.close(), b.close()]);
    await sandbox.close();
  });

  it('holds across two instances: never more than the limit reaches the provider', async () => {
    const before = agentRequests();
    const attempts = Array.from({ length: 14 }, (_, i) => {
      const service = i % 2 ? a : b;
      return i % 3 === 0
        ? service.get(WalletLinkClient).linkUser({ email: uniqueEmail('budget'), phone: `65000${1000 + i}`, phoneCountry: '+237' })
        : service.get(PayinClient).collect(payinBody(), { service: 1 });
    });
    const results = await Promise.allSettled(attempts);
    const refused = results.filter((r) => r.status === 'rejected' && r.reason instanceof AgentBudgetExhaustedError);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(LIMIT);
    expect(refused).toHaveLength(14 - LIMIT);
    expect(agentRequests() - before).toBe(LIMIT);
    expect(await taken()).toBe(LIMIT);
  });

  it('a refusal says when to retry, within the hour', async () => {
    for (let i = 0; i < LIMIT; i++) await a.get(PayinClient).collect(payinBody(), { service: 1 });
    const error = await b
      .get(PayinClient)
      .collect(payinBody(), { service: 1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentBudgetExhaustedError);
    const exhausted = error as AgentBudgetExhaustedError;
    // Counted per minute: a call leaves the count when its whole minute is more than an hour old.
    expect(exhausted.retryAfterSeconds).toBeGreaterThan(3500);
    expect(exhausted.retryAfterSeconds).toBeLessThanOrEqual(3660);
    expect(exhausted.outcomeKnown).toBe(true);
  });

  it('frees slots as they leave the rolling hour', async () => {
    for (let i = 0; i < LIMIT; i++) await a.get(PayinClient).collect(payinBody(), { service: 1 });
    await expect(a.get(PayinClient).collect(payinBody(), { service: 1 })).rejects.toBeInstanceOf(AgentBudgetExhaustedError);
    await a.prisma.$executeRaw`UPDATE agent_budgets SET minute = minute - 62`;
    await expect(a.get(PayinClient).collect(payinBody(), { service: 1 })).resolves.toMatchObject({ status: 'PROCESSING' });
  });

  it('counts the minute before in full, and a minute that began over an hour ago no more', async () => {
    await setBudgetRow(a.prisma, { merchant: true }, [{ minutesAgo: 1, calls: LIMIT - 1 }]);
    await expect(a.get(PayinClient).collect(payinBody(), { service: 1 })).resolves.toMatchObject({ status: 'PROCESSING' });
    await expect(b.get(PayinClient).collect(payinBody(), { service: 1 })).rejects.toBeInstanceOf(AgentBudgetExhaustedError);
    await setBudgetRow(a.prisma, { merchant: true }, [
      { minutesAgo: 60, calls: LIMIT - 1 },
      { minutesAgo: 0, calls: 1 },
    ]);
    // Its minute still overlaps the last hour: counted.
    await expect(b.get(PayinClient).collect(payinBody(), { service: 1 })).rejects.toBeInstanceOf(AgentBudgetExhaustedError);
    await setBudgetRow(a.prisma, { merchant: true }, [
      { minutesAgo: 61, calls: LIMIT - 1 },
      { minutesAgo: 0, calls: 1 },
    ]);
    await expect(b.get(PayinClient).collect(payinBody(), { service: 1 })).resolves.toMatchObject({ status: 'PROCESSING' });
  });

  it('a take whose now() is older than the last take counts in the newer minute, and every take under one row lock', async () => {
    await setBudgetRow(a.prisma, { merchant: true }, [{ minutesAgo: -1, calls: LIMIT - 1 }]);
    await expect(a.get(PayinClient).collect(payinBody(), { service: 1 })).resolves.toMatchObject({ status: 'PROCESSING' });
    await expect(b.get(PayinClient).collect(payinBody(), { service: 1 })).rejects.toBeInstanceOf(AgentBudgetExhaustedError);
    expect(await taken()).toBe(LIMIT);
  });

  it('the sweeper keeps the merchant-wide row, whose calls age within it', async () => {
    await setBudgetRow(a.prisma, { merchant: true }, [{ minutesAgo: 62, calls: 3 }]);
    expect(await a.get(AgentBudgetSweepJob).runNow()).toBe(0);
    expect(await taken()).toBe(0);
    expect(await a.prisma.agentBudget.count()).toBe(1);
  });

  it('does not count card and token calls, which are outside /api/agent', async () => {
    for (let i = 0; i < LIMIT + 2; i++)
      await a
        .get(CardsClient)
        .getCard('missing')
        .catch(() => undefined);
    expect(await taken()).toBe(0);
  });

  it('maps to 429 problem+json with Retry-After for the HTTP layer', () => {
    const { problem, headers } = new ProblemDetailsFilter(pino({ level: 'silent' })).toProblem(
      new AgentBudgetExhaustedError(1234),
      'req-1',
    );
    expect(problem).toMatchObject({
      status: 429,
      code: 'provider_budget_exhausted',
      retryAfterSeconds: 1234,
      requestId: 'req-1',
      outcomeKnown: true,
    });
    expect(headers['retry-after']).toBe('1234');
  });
});
