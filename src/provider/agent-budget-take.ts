import { column, type RowOf } from '../database/sql-statement';

/**
 * A bucket is counted while any part of its minute lies within the last hour: the count can only
 * be too high (by calls made up to a minute more than an hour ago), never too low.
 */
export const COUNTED = `bucket > now() - interval '61 minutes'`;

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
 * database: the merchant-wide bucket and, for a customer's request, the customer's bucket too.
 * Calls go to the bucket of the current minute; its row lock (ON CONFLICT DO UPDATE) serialises
 * the takers of one minute, and the check is made against its latest count. The bucket of the
 * minute before is read FOR SHARE: a taker still in flight there from the last instant of that
 * minute is waited for and counted, so the turn of a minute cannot let two takers both see one
 * call left. Older buckets no longer change. Nothing is held once the statement ends.
 *
 * The customer's count decides first (read without its lock), so that a customer past its share
 * never spends a merchant-wide slot; the customer's bucket is then taken only with the merchant's
 * slot, and checked again under its own lock. Two takers of one customer racing for its last slot
 * in the same minute: one of them is refused after its merchant slot was taken, which leaves the
 * merchant-wide count one too high for an hour (never too low), and the customer's count exact.
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
    SELECT date_trunc('minute', now()) AS current
  ), budget_previous AS (
    SELECT b.used FROM agent_budget_buckets b, budget_clock WHERE b.bucket = budget_clock.current - interval '1 minute' FOR SHARE OF b
  ), budget_settled AS (
    SELECT COALESCE((SELECT used FROM budget_previous), 0)
      + (SELECT COALESCE(sum(b.used), 0) FROM agent_budget_buckets b, budget_clock
         WHERE b.${COUNTED} AND b.bucket < budget_clock.current - interval '1 minute') AS used
  ), budget_room AS (
    SELECT budget_settled.used + COALESCE((SELECT b.used FROM agent_budget_buckets b, budget_clock WHERE b.bucket = budget_clock.current), 0)
      < ${limit} AS room
    FROM budget_settled
  ), customer_limit AS (
    SELECT COALESCE((SELECT l.provider_calls_per_hour FROM customer_limits l WHERE l.subject = ${customer}), ${customerDefault}) AS calls
  ), customer_previous AS (
    SELECT b.used FROM customer_budget_buckets b, budget_clock
    WHERE b.subject = ${customer} AND b.bucket = budget_clock.current - interval '1 minute' FOR SHARE OF b
  ), customer_counted AS (
    SELECT COALESCE((SELECT used FROM customer_previous), 0)
      + COALESCE(sum(b.used) FILTER (WHERE b.bucket < budget_clock.current - interval '1 minute'), 0) AS settled,
      COALESCE(sum(b.used) FILTER (WHERE b.bucket = budget_clock.current), 0) AS current,
      min(b.bucket) FILTER (WHERE b.used > 0) AS oldest
    FROM budget_clock LEFT JOIN customer_budget_buckets b ON b.subject = ${customer} AND b.${COUNTED}
    GROUP BY budget_clock.current
  ), customer_fits AS (
    SELECT ${customer} IS NULL OR c.settled + c.current < l.calls AS fits FROM customer_counted c, customer_limit l
  ), budget_merchant AS (
    INSERT INTO agent_budget_buckets AS b (bucket, used)
    SELECT budget_clock.current, 1 FROM budget_clock, budget_settled, customer_fits
    WHERE budget_settled.used < ${limit} AND customer_fits.fits AND (${onlyIf})
    ON CONFLICT (bucket) DO UPDATE SET used = b.used + 1
    WHERE b.used + (SELECT used FROM budget_settled) < ${limit}
    RETURNING b.used
  ), customer_taken AS (
    INSERT INTO customer_budget_buckets AS b (subject, bucket, used)
    SELECT ${customer}, budget_clock.current, 1 FROM budget_clock, customer_counted, customer_limit
    WHERE ${customer} IS NOT NULL AND EXISTS (SELECT 1 FROM budget_merchant) AND customer_counted.settled < customer_limit.calls
    ON CONFLICT (subject, bucket) DO UPDATE SET used = b.used + 1
    WHERE b.used + (SELECT settled FROM customer_counted) < (SELECT calls FROM customer_limit)
    RETURNING b.used
  ), budget AS (
    SELECT 1 FROM budget_merchant WHERE ${customer} IS NULL OR EXISTS (SELECT 1 FROM customer_taken)
  ), budget_share AS (
    SELECT ${customer} IS NOT NULL AND (${onlyIf}) AND NOT EXISTS (SELECT 1 FROM customer_taken)
        AND (EXISTS (SELECT 1 FROM budget_merchant) OR (NOT customer_fits.fits AND budget_room.room)) AS "customerRefused",
      customer_limit.calls AS "customerLimit",
      (customer_counted.settled + COALESCE((SELECT used FROM customer_taken), customer_counted.current))::int AS "customerUsed",
      (EXTRACT(EPOCH FROM (COALESCE(customer_counted.oldest, budget_clock.current) + interval '61 minutes' - now())) * 1000)::float8
        AS "customerFreesInMs"
    FROM budget_clock, customer_counted, customer_limit, customer_fits, budget_room
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
