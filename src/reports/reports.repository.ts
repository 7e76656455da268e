import { Injectable } from '@nestjs/common';
import { Database } from '../database/database';
import { ReplicaReads } from '../database/replica-reads.service';
import { column, sqlStatement, type StatementRow } from '../database/sql-statement';
import { registeredOperationTables } from '../provider-operations/operation-tables';

/** The SQL of ReportsRepository and AttentionRepository, written out (listed in src/queries/reports.repository.sql). */
const repository = 'reports.repository';

export interface SummaryRow {
  status: string;
  currency: string;
  count: number;
  /** Exact decimal sum, as PostgreSQL computed it (numeric, no float). */
  total: string;
}

/** Count and exact total per status and currency of the orders created in [$1, $2) (an absent bound is an infinite one). */
const ORDER_SUMMARY = sqlStatement(
  repository,
  'orderSummary',
  'reports_order_summary',
  `
  SELECT status::text AS status, currency::text AS currency, count(*)::int AS count, sum(amount)::text AS total
  FROM orders
  WHERE created_at >= $1::timestamptz AND created_at < $2::timestamptz
  GROUP BY status, currency
  ORDER BY currency, status`,
  { status: column.text, currency: column.text, count: column.int4, total: column.text },
);

@Injectable()
export class ReportsRepository {
  constructor(private readonly financeReads: ReplicaReads) {}

  /** A finance read: on the replica while it is fresh. */
  async orderSummary(from?: Date, to?: Date): Promise<SummaryRow[]> {
    return this.financeReads.run(ORDER_SUMMARY, [from ?? '-infinity', to ?? 'infinity']);
  }
}

/** One queue of the attention report: how many wait, and the oldest of them. */
export interface AttentionQueue {
  count: number;
  oldest: Record<string, unknown>[];
}

/** Every queue of the attention report: by operation table (its report key, `cardOperations`), then by queue (`unknown`). */
export type AttentionQueues = Record<string, Record<string, AttentionQueue>>;

/** The stale-pending window's bound, $1 seconds before now by the database clock (like the sweep and the resolution guard). */
const STALE_PENDING_BEFORE = sqlStatement(
  repository,
  'attention',
  'reports_stale_pending_before',
  `
  SELECT now() - make_interval(secs => $1::float8) AS "stalePendingBefore"`,
  { stalePendingBefore: column.timestamptz },
);

/** For /metrics: how long the oldest PROCESSING order has waited for the provider's callback, since it was handed over (none: no row). */
const AWAITING_CALLBACK = sqlStatement(
  repository,
  'waiting',
  'reports_awaiting_callback',
  `
  SELECT 'orders_awaiting_callback'::text AS queue, count(*)::int AS items,
    extract(epoch FROM now() - min(coalesce(submitted_at, created_at)))::float8 AS "oldestAgeSeconds"
  FROM orders WHERE status = 'PROCESSING'
  HAVING count(*) > 0`,
  { queue: column.text, items: column.int4, oldestAgeSeconds: column.float8 },
);

/** Per queue (by its metric label): how many wait and the oldest one's age in seconds. */
export type WaitingRow = StatementRow<typeof AWAITING_CALLBACK>;

/**
 * What waits for a person, oldest first: the queues of every registered operation table
 * (registerOperationTable's `attention`, its statements written out there). Each queue is one
 * filter served by an index on (filter, created_at, id), read backwards: counting and the first
 * rows never scan the table.
 */
@Injectable()
export class AttentionRepository {
  constructor(
    private readonly database: Database,
    private readonly financeReads: ReplicaReads,
  ) {}

  /** A finance read: on the replica while it is fresh. The bound first, then every table's counts and rows at once. */
  async attention(limit: number, stalePendingSeconds: number): Promise<AttentionQueues> {
    const [{ stalePendingBefore }] = await this.financeReads.run(STALE_PENDING_BEFORE, [stalePendingSeconds]);
    const tables = registeredOperationTables();
    const read = tables.map(async ({ reportKey, attention }) => {
      const stale = attention.usesStalePending ? [stalePendingBefore] : [];
      const [counts, rows] = await Promise.all([
        this.financeReads.run(attention.counts, stale),
        this.financeReads.run(attention.rows, [limit, ...stale]),
      ]);
      const queues = counts.map(({ queue, count }): [string, AttentionQueue] => [
        queue,
        { count, oldest: rows.filter((row) => row.queue === queue).map(({ queue: _queue, ...row }) => row) },
      ]);
      return [reportKey, Object.fromEntries(queues)] as const;
    });
    return Object.fromEntries(await Promise.all(read));
  }

  /** Each attention queue's size and oldest age, and the oldest wait for a callback: on the primary, alerts see what is. */
  async waiting(stalePendingSeconds: number): Promise<WaitingRow[]> {
    const tables = registeredOperationTables();
    const read = [
      ...tables.map(({ attention }) => this.database.run(attention.waiting, attention.usesStalePending ? [stalePendingSeconds] : [])),
      this.database.run(AWAITING_CALLBACK, []),
    ];
    return (await Promise.all(read)).flat();
  }
}

/** The metric label of every attention queue (`card_operations_unknown`), in the order of the tables and their queues. */
export function attentionQueueLabels(): string[] {
  return registeredOperationTables().flatMap(({ attention }) => Object.values(attention.labels));
}
