import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import { column, sqlStatement } from '../database/sql-statement';
import {
  agentBudgetTakeCte,
  BUDGET_SHARE_COLUMNS,
  BUDGET_SHARE_SELECT,
  budgetSlotValues,
  COUNTED,
  secondsOf,
  type BudgetShareRow,
  type BudgetSlotRequest,
} from './agent-budget-take';

export type BudgetDecision =
  | { granted: true; share: BudgetShareRow }
  | { granted: false; refusedBy: 'customer' | 'merchant'; retryAfterSeconds: number; share: BudgetShareRow };

const repository = 'agent-budget.repository';

const TAKE = sqlStatement(
  repository,
  'take',
  'agent_budget_take',
  `
  WITH ${agentBudgetTakeCte(1)}
  SELECT EXISTS (SELECT 1 FROM budget) AS granted, ${BUDGET_SHARE_SELECT} FROM budget_share`,
  { granted: column.bool, ...BUDGET_SHARE_COLUMNS },
);

/** When the oldest counted bucket leaves the window (asked only after a refusal). */
const RETRY_AFTER = sqlStatement(
  repository,
  'take',
  'agent_budget_retry_after',
  `
  SELECT (EXTRACT(EPOCH FROM (min(bucket) + interval '61 minutes' - now())) * 1000)::float8 AS "retryAfterMs"
  FROM agent_budget_buckets WHERE ${COUNTED} AND used > 0`,
  { retryAfterMs: column.float8.orNull },
);

const USED = sqlStatement(
  repository,
  'usedInLastHour',
  'agent_budget_used',
  `
  SELECT COALESCE(sum(used), 0)::int AS used FROM agent_budget_buckets WHERE ${COUNTED}`,
  { used: column.int4 },
);

const SWEEP = sqlStatement(
  repository,
  'sweep',
  'agent_budget_sweep',
  `
  DELETE FROM agent_budget_buckets WHERE NOT (${COUNTED})`,
);

const SWEEP_CUSTOMERS = sqlStatement(
  repository,
  'sweep',
  'customer_budget_sweep',
  `
  DELETE FROM customer_budget_buckets WHERE NOT (${COUNTED})`,
);

@Injectable()
export class AgentBudgetRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** One round trip when granted or refused by the customer's share; a merchant-wide refusal asks when a slot frees. */
  async take(slot: BudgetSlotRequest): Promise<BudgetDecision> {
    const [{ granted, ...share }] = await this.prisma.run(TAKE, budgetSlotValues(slot));
    if (granted) return { granted: true, share };
    if (share.customerRefused)
      return { granted: false, refusedBy: 'customer', retryAfterSeconds: secondsOf(share.customerFreesInMs), share };
    const [oldest] = await this.prisma.run(RETRY_AFTER, []);
    return { granted: false, refusedBy: 'merchant', retryAfterSeconds: secondsOf(oldest?.retryAfterMs ?? 1000), share };
  }

  async usedInLastHour(): Promise<number> {
    const [row] = await this.prisma.run(USED, []);
    return row.used;
  }

  /** Removes the buckets no longer counted, merchant-wide and per customer; returns how many. */
  async sweep(): Promise<number> {
    return (await this.prisma.runCounted(SWEEP, [])).count + (await this.prisma.runCounted(SWEEP_CUSTOMERS, [])).count;
  }
}
