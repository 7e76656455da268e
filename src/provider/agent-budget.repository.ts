import { Injectable } from '@nestjs/common';
import { Database } from '../database/database';
import { column, sqlStatement } from '../database/sql-statement';
import {
  agentBudgetTakeCte,
  BUDGET_SHARE_COLUMNS,
  AGENT_API,
  BUDGET_SHARE_SELECT,
  budgetSlotValues,
  secondsOf,
  type BudgetShareRow,
  type BudgetSlotRequest,
} from './agent-budget-take';
import { CURRENT_MINUTE, freesInMs, leftTheWindow, oldestAt, usedAt } from './agent-budget-window';

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

/** When the oldest counted call leaves the window (asked only after a refusal). */
const RETRY_AFTER = sqlStatement(
  repository,
  'take',
  'agent_budget_retry_after',
  `
  SELECT ${freesInMs(oldestAt('m', CURRENT_MINUTE))} AS "retryAfterMs" FROM agent_budgets m WHERE m.api = '${AGENT_API}'`,
  { retryAfterMs: column.float8 },
);

const USED = sqlStatement(
  repository,
  'usedInLastHour',
  'agent_budget_used',
  `
  SELECT COALESCE((SELECT ${usedAt('m', CURRENT_MINUTE)} FROM agent_budgets m WHERE m.api = '${AGENT_API}'), 0) AS used`,
  { used: column.int4 },
);

/** The merchant-wide row is one row, kept; a customer's row goes once all its calls left the window. */
const SWEEP = sqlStatement(
  repository,
  'sweep',
  'customer_budget_sweep',
  `
  DELETE FROM customer_budgets c WHERE ${leftTheWindow('c')}`,
);

@Injectable()
export class AgentBudgetRepository {
  constructor(private readonly database: Database) {}

  /** One round trip when granted or refused by the customer's share; a merchant-wide refusal asks when a slot frees. */
  async take(slot: BudgetSlotRequest): Promise<BudgetDecision> {
    const [{ granted, ...share }] = await this.database.run(TAKE, budgetSlotValues(slot));
    if (granted) return { granted: true, share };
    if (share.customerRefused)
      return { granted: false, refusedBy: 'customer', retryAfterSeconds: secondsOf(share.customerFreesInMs), share };
    const [oldest] = await this.database.run(RETRY_AFTER, []);
    return { granted: false, refusedBy: 'merchant', retryAfterSeconds: secondsOf(oldest?.retryAfterMs ?? 1000), share };
  }

  async usedInLastHour(): Promise<number> {
    const [row] = await this.database.run(USED, []);
    return row.used;
  }

  /** Removes the customers' rows with no call counted any more; returns how many. */
  async sweep(): Promise<number> {
    return (await this.database.runCounted(SWEEP, [])).count;
  }
}
