import { column, type RowOf } from '../database/sql-statement';
import {
  CURRENT_MINUTE,
  FIRST_TOTALS,
  freesInMs,
  oldestAt,
  oldestAtNewest,
  totalsTakenAt,
  usedAt,
  usedAtNewest,
} from './agent-budget-window';

/** The key of the /api/agent/* budget's row in agent_budgets. */
export const AGENT_API = 'agent';

/** What one take asks: the merchant-wide limit and, for a customer's request, that customer's share. */
export interface BudgetSlotRequest {
  hourlyLimit: number;
  /** The customer whose request causes the call (the token's `sub`); null: merchant-wide only (staff, background jobs). */
  customer: string | null;
  /** PROVIDER_CUSTOMER_HOURLY_LIMIT: the share of a customer without an override (customer_limits). */
  customerHourlyLimit: number;
}

/** The parameters of agentBudgetTakeCte, in order: the hourly limit, the customer, the customer's default share. */
export function budgetSlotValues(slot: BudgetSlotRequest | null): unknown[] {
  return [slot?.hourlyLimit ?? null, slot?.customer ?? null, slot?.customerHourlyLimit ?? null];
}

/**
 * Takes one call of the rolling-hour budget, in one statement, for every instance sharing the
 * database: the merchant-wide row (agent_budgets) and, for a customer's request, the customer's row
 * (customer_budgets), each a rolling hour in one row (customer-budget-window.ts). A row's lock (ON
 * CONFLICT DO UPDATE) serialises its takers, whatever their minute, and the check is made against
 * its latest version; nothing is held once the statement ends.
 *
 * The customer's count decides first (read without the lock), so that a customer past its share
 * never spends a merchant-wide slot; the customer's row is then taken only with the merchant's slot,
 * and checked again under its own lock. Two takers of one customer racing for its last slot: one of
 * them is refused after its merchant slot was taken, which leaves the merchant-wide count one too
 * high for an hour (never too low), and the customer's count exact.
 *
 * Every take locks the same rows in the same order, the merchant's row and then the customer's:
 * two takers cannot wait for each other in a cycle (the minute buckets this replaced deadlocked at
 * the turn of a minute; test/postgres-only/customer-budget-minute-turn.e2e-spec.ts).
 *
 * When the merchant-wide budget is spent too, the refusal is the merchant's (provider_budget_exhausted):
 * the customer's own share refuses only a call the merchant-wide budget had room for.
 *
 * Named CTEs: `budget` (one row when the call was granted) and `budget_share` (always one row: the
 * customer's share after this take, and whether the customer's limit refused it). `p` numbers the
 * three parameters of budgetSlotValues; `onlyIf`, a condition the slot is taken under (on the
 * statement's other CTEs).
 */
export function agentBudgetTakeCte(p: number, onlyIf = 'true'): string {
  const limit = `$${p}::int`;
  const customer = `$${p + 1}::text`;
  const customerDefault = `$${p + 2}::int`;
  return `budget_clock AS (
    SELECT ${CURRENT_MINUTE} AS minute
  ), budget_room AS (
    SELECT COALESCE(${usedAt('m', 'budget_clock.minute')}, 0) < ${limit} AS room
    FROM budget_clock LEFT JOIN agent_budgets m ON m.api = '${AGENT_API}'
  ), customer_counted AS (
    SELECT l.calls, COALESCE(${usedAt('c', 'budget_clock.minute')}, 0) AS used,
      ${oldestAt('c', 'budget_clock.minute')} AS oldest,
      ${customer} IS NULL OR COALESCE(${usedAt('c', 'budget_clock.minute')}, 0) < l.calls AS fits
    FROM budget_clock
      CROSS JOIN (SELECT COALESCE((SELECT l.provider_calls_per_hour FROM customer_limits l WHERE l.subject = ${customer}), ${customerDefault}) AS calls) l
      LEFT JOIN customer_budgets c ON c.subject = ${customer}
  ), budget_merchant AS (
    INSERT INTO agent_budgets AS m (api, minute, totals)
    SELECT '${AGENT_API}', budget_clock.minute, ${FIRST_TOTALS} FROM budget_clock, customer_counted
    WHERE ${limit} > 0 AND customer_counted.fits AND (${onlyIf})
    ON CONFLICT (api) DO UPDATE SET minute = GREATEST(m.minute, EXCLUDED.minute), totals = ${totalsTakenAt('m', 'EXCLUDED.minute')}
    WHERE ${usedAt('m', 'EXCLUDED.minute')} < ${limit}
    RETURNING 1
  ), customer_taken AS (
    INSERT INTO customer_budgets AS c (subject, minute, totals)
    SELECT ${customer}, budget_clock.minute, ${FIRST_TOTALS} FROM budget_clock, customer_counted
    WHERE ${customer} IS NOT NULL AND EXISTS (SELECT 1 FROM budget_merchant) AND customer_counted.calls > 0
    ON CONFLICT (subject) DO UPDATE SET minute = GREATEST(c.minute, EXCLUDED.minute), totals = ${totalsTakenAt('c', 'EXCLUDED.minute')}
    WHERE ${usedAt('c', 'EXCLUDED.minute')} < (SELECT calls FROM customer_counted)
    RETURNING ${usedAtNewest('c')} AS used, ${oldestAtNewest('c')} AS oldest
  ), budget AS (
    SELECT 1 FROM budget_merchant WHERE ${customer} IS NULL OR EXISTS (SELECT 1 FROM customer_taken)
  ), budget_share AS (
    SELECT ${customer} IS NOT NULL AND (${onlyIf}) AND NOT EXISTS (SELECT 1 FROM customer_taken)
        AND (EXISTS (SELECT 1 FROM budget_merchant) OR (NOT customer_counted.fits AND (SELECT room FROM budget_room))) AS "customerRefused",
      customer_counted.calls AS "customerLimit",
      COALESCE((SELECT used FROM customer_taken), customer_counted.used) AS "customerUsed",
      ${freesInMs('COALESCE((SELECT oldest FROM customer_taken), customer_counted.oldest)')} AS "customerFreesInMs"
    FROM customer_counted
  )`;
}

/** The columns of budget_share, for a statement that answers them. */
export const BUDGET_SHARE_COLUMNS = {
  customerRefused: column.bool,
  customerLimit: column.int4.orNull,
  customerUsed: column.int4,
  customerFreesInMs: column.float8,
};

/** budget_share's columns, as a statement selects them (`FROM budget_share` or a join with it). */
export const BUDGET_SHARE_SELECT = `budget_share."customerRefused", budget_share."customerLimit", budget_share."customerUsed",
  budget_share."customerFreesInMs"`;

export type BudgetShareRow = RowOf<typeof BUDGET_SHARE_COLUMNS>;

/** Whole seconds until a moment `ms` away, at least 1: never earlier than the moment itself. */
export function secondsOf(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
