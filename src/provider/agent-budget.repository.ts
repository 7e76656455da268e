import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import { column, sqlStatement } from '../database/sql-statement';

export type BudgetDecision = { granted: true } | { granted: false; retryAfterSeconds: number };

const repository = 'agent-budget.repository';

/**
 * A bucket is counted while any part of its minute lies within the last hour: the count can only
 * be too high (by calls made up to a minute more than an hour ago), never too low.
 */
const COUNTED = `bucket > now() - interval '61 minutes'`;

/**
 * Takes one call of the rolling-hour budget, in one statement, for every instance sharing the
 * database. Calls go to the bucket of the current minute; its row lock (ON CONFLICT DO UPDATE)
 * serialises the takers of one minute, and the check is made against its latest count. The bucket
 * of the minute before is read FOR SHARE: a taker still in flight there from the last instant of
 * that minute is waited for and counted, so the turn of a minute cannot let two takers both see
 * one call left. Older buckets no longer change. Nothing is held once the statement ends.
 */
/**
 * The taking of one call, as a CTE named `budget` (one row when the call was granted), for TAKE
 * and for the statement of a write that takes its call's slot in its own round trip (the pay-in's
 * order). `limit` is the hourly limit's parameter; `onlyIf`, a condition the slot is taken under
 * (on the statement's other CTEs).
 */
export function agentBudgetTakeCte(limit: string, onlyIf = 'true'): string {
  return `budget_clock AS (
    SELECT date_trunc('minute', now()) AS current
  ), budget_previous AS (
    SELECT b.used FROM agent_budget_buckets b, budget_clock WHERE b.bucket = budget_clock.current - interval '1 minute' FOR SHARE OF b
  ), budget_settled AS (
    SELECT COALESCE((SELECT used FROM budget_previous), 0)
      + (SELECT COALESCE(sum(b.used), 0) FROM agent_budget_buckets b, budget_clock
         WHERE b.${COUNTED} AND b.bucket < budget_clock.current - interval '1 minute') AS used
  ), budget AS (
    INSERT INTO agent_budget_buckets AS b (bucket, used)
    SELECT budget_clock.current, 1 FROM budget_clock, budget_settled WHERE budget_settled.used < ${limit} AND (${onlyIf})
    ON CONFLICT (bucket) DO UPDATE SET used = b.used + 1
    WHERE b.used + (SELECT used FROM budget_settled) < ${limit}
    RETURNING b.used
  )`;
}

const TAKE = sqlStatement(
  repository,
  'take',
  'agent_budget_take',
  `
  WITH ${agentBudgetTakeCte('$1::int')}
  SELECT used FROM budget`,
  { used: column.int4 },
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

@Injectable()
export class AgentBudgetRepository {
  constructor(private readonly prisma: PrismaService) {}

  async take(hourlyLimit: number): Promise<BudgetDecision> {
    const taken = await this.prisma.run(TAKE, [hourlyLimit]);
    if (taken.length === 1) return { granted: true };
    const [oldest] = await this.prisma.run(RETRY_AFTER, []);
    return { granted: false, retryAfterSeconds: Math.max(1, Math.ceil((oldest?.retryAfterMs ?? 1000) / 1000)) };
  }

  async usedInLastHour(): Promise<number> {
    const [row] = await this.prisma.run(USED, []);
    return row.used;
  }

  /** Removes the buckets no longer counted; returns how many. */
  async sweep(): Promise<number> {
    return (await this.prisma.runCounted(SWEEP, [])).count;
  }
}
