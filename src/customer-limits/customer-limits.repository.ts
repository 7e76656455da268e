import { Injectable } from '@nestjs/common';
import { appendAuditEvent } from '../audit/audit.repository';
import type { NewAuditEvent } from '../audit/audit.types';
import { Database } from '../database/database';
import { column, sqlStatement } from '../database/sql-statement';
import { CURRENT_MINUTE, leftTheWindow, usedAt } from '../provider/agent-budget-window';

const repository = 'customer-limits.repository';

/** A customer's override (if any) and its calls counted in the rolling hour, as the budget counts them. */
const FIND = sqlStatement(
  repository,
  'find',
  'customer_limits_find',
  `
  SELECT (SELECT l.provider_calls_per_hour FROM customer_limits l WHERE l.subject = $1::text) AS "override",
    COALESCE((SELECT ${usedAt('c', CURRENT_MINUTE)} FROM customer_budgets c WHERE c.subject = $1::text), 0) AS "usedInLastHour"`,
  { override: column.int4.orNull, usedInLastHour: column.int4 },
);

const UPSERT = sqlStatement(
  repository,
  'set',
  'customer_limits_set',
  `
  INSERT INTO customer_limits AS l (subject, provider_calls_per_hour, note, set_by, updated_at)
  VALUES ($1::text, $2::int, $3::text, $4::text, now())
  ON CONFLICT (subject) DO UPDATE SET provider_calls_per_hour = EXCLUDED.provider_calls_per_hour, note = EXCLUDED.note,
    set_by = EXCLUDED.set_by, updated_at = now()
  RETURNING (SELECT provider_calls_per_hour FROM customer_limits WHERE subject = $1::text) AS "previous"`,
  { previous: column.int4.orNull },
);

const DELETE = sqlStatement(
  repository,
  'clear',
  'customer_limits_clear',
  `
  DELETE FROM customer_limits WHERE subject = $1::text RETURNING provider_calls_per_hour AS "previous"`,
  { previous: column.int4 },
);

/**
 * The customers' shares as the metric shows them: how many customers used what part of their
 * limit in the rolling hour (a blocked customer with calls counted is at 100 %), and the highest
 * part any of them used. Customers are counted, never named.
 */
const SHARES = sqlStatement(
  repository,
  'shares',
  'customer_limits_shares',
  `
  WITH shares AS (
    SELECT CASE WHEN COALESCE(l.provider_calls_per_hour, $1::int) = 0 THEN 1
      ELSE u.used::float8 / COALESCE(l.provider_calls_per_hour, $1::int) END AS share
    FROM (SELECT c.subject, ${usedAt('c', CURRENT_MINUTE)} AS used FROM customer_budgets c WHERE NOT (${leftTheWindow('c')})) u
    LEFT JOIN customer_limits l ON l.subject = u.subject
  )
  SELECT count(*) FILTER (WHERE share < 0.5)::int AS "belowHalf",
    count(*) FILTER (WHERE share >= 0.5 AND share < 0.8)::int AS "fromHalf",
    count(*) FILTER (WHERE share >= 0.8 AND share < 1)::int AS "fromEightyPercent",
    count(*) FILTER (WHERE share >= 1)::int AS "atLimit",
    COALESCE(max(share), 0)::float8 AS "highest"
  FROM shares`,
  { belowHalf: column.int4, fromHalf: column.int4, fromEightyPercent: column.int4, atLimit: column.int4, highest: column.float8 },
);

export interface CustomerShares {
  belowHalf: number;
  fromHalf: number;
  fromEightyPercent: number;
  atLimit: number;
  highest: number;
}

/** Customers' own limits (customer_limits) and what the provider budget counted for them. */
@Injectable()
export class CustomerLimitsRepository {
  constructor(private readonly database: Database) {}

  async find(subject: string): Promise<{ override: number | null; usedInLastHour: number }> {
    const [row] = await this.database.run(FIND, [subject]);
    return row;
  }

  /** Sets the override and appends its audit event in one transaction; answers the override it replaced. */
  async set(
    change: { subject: string; callsPerHour: number; note: string; setBy: string },
    audit: (previous: number | null) => NewAuditEvent,
  ): Promise<void> {
    await this.database.inTransaction(async (run) => {
      const [row] = (await run(UPSERT, [change.subject, change.callsPerHour, change.note, change.setBy])).rows;
      await appendAuditEvent(run, audit(row.previous));
    });
  }

  /** Removes the override with its audit event; false (and no event) when there was none. */
  async clear(subject: string, audit: (previous: number) => NewAuditEvent): Promise<boolean> {
    return this.database.inTransaction(async (run) => {
      const [row] = (await run(DELETE, [subject])).rows;
      if (!row) return false;
      await appendAuditEvent(run, audit(row.previous));
      return true;
    });
  }

  async shares(defaultLimit: number): Promise<CustomerShares> {
    const [row] = await this.database.run(SHARES, [defaultLimit]);
    return row;
  }
}
