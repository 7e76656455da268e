import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import { sqlStatement } from '../database/sql-statement';

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
const TAKE = sqlStatement(
  repository,
  'take',
  'agent_budget_take',
  `
  WITH clock AS (
    SELECT date_trunc('minute', now()) AS current
  ), previous AS (
    SELECT b.used FROM agent_budget_buckets b, clock WHERE b.bucket = clock.current - interval '1 minute' FOR SHARE OF b
  ), settled AS (
    SELECT COALESCE((SELECT used FROM previous), 0)
      + (SELECT COALESCE(sum(b.used), 0) FROM agent_budget_buckets b, clock
         WHERE b.${COUNTED} AND b.bucket < clock.current - interval '1 minute') AS used
  )
  INSERT INTO agent_budget_buckets AS b (bucket, used)
  SELECT clock.current, 1 FROM clock, settled WHERE settled.used < $1
  ON CONFLICT (bucket) DO UPDATE SET used = b.used + 1
  WHERE b.used + (SELECT used FROM settled) < $1
  RETURNING b.used`,
);

/** When the oldest counted bucket leaves the window (asked only after a refusal). */
const RETRY_AFTER = sqlStatement(
  repository,
  'take',
  'agent_budget_retry_after',
  `
  SELECT (EXTRACT(EPOCH FROM (min(bucket) + interval '61 minutes' - now())) * 1000)::float8 AS "retryAfterMs"
  FROM agent_budget_buckets WHERE ${COUNTED} AND used > 0`,
);

const USED = sqlStatement(
  repository,
  'usedInLastHour',
  'agent_budget_used',
  `
  SELECT COALESCE(sum(used), 0)::int AS used FROM agent_budget_buckets WHERE ${COUNTED}`,
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
    const taken = await this.prisma.run<{ used: number }>(TAKE, [hourlyLimit]);
    if (taken.length === 1) return { granted: true };
    const [oldest] = await this.prisma.run<{ retryAfterMs: number | null }>(RETRY_AFTER, []);
    return { granted: false, retryAfterSeconds: Math.max(1, Math.ceil((oldest?.retryAfterMs ?? 1000) / 1000)) };
  }

  async usedInLastHour(): Promise<number> {
    const [row] = await this.prisma.run<{ used: number }>(USED, []);
    return row.used;
  }

  /** Removes the buckets no longer counted; returns how many. */
  async sweep(): Promise<number> {
    return (await this.prisma.runCounted(SWEEP, [])).count;
  }
}
