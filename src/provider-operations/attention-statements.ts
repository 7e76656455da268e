import type { RowDeclaration, RowFields } from '../database/row-declaration';
import { column, sqlStatement, type Column, type Columns, type SqlStatement } from '../database/sql-statement';

/** One queue of the attention report: the rows of its table that match `where`, oldest first. */
export interface AttentionQueueDefinition {
  /** Its key in the report (`unknown`, `stalePending`); its metric label is `<table>_<name in snake_case>`. */
  name: string;
  /** The SQL condition on the table's columns. */
  where: string;
  /** Only rows older than the stale-pending window as well (PENDING work whose process died). */
  stalePending?: boolean;
}

export interface AttentionDefinition<Fields extends RowFields> {
  /** What a row of its queues shows (its `amount` formatted in its `currency`, times as ISO text). */
  row: RowDeclaration<Fields>;
  queues: readonly AttentionQueueDefinition[];
}

/** A row of a queue: its declared fields (an `amount` with its `currency`, times as Date), after the name of its queue. */
export type AttentionRow = { queue: string } & Record<string, unknown>;

/** The statements of a table's attention queues, written out from its definition (registerOperationTable). */
export interface AttentionStatements {
  /** Each queue's size: `$1` the stale-pending bound (when a queue uses it). */
  readonly counts: SqlStatement<{ queue: string; count: number }>;
  /** The `$1` oldest rows of each queue, named by `queue`; `$2` the stale-pending bound (when a queue uses it). */
  readonly rows: SqlStatement<AttentionRow>;
  /** Per queue (by metric label) how many wait and the oldest one's age in seconds; `$1` the stale-pending window in seconds (when used). */
  readonly waiting: SqlStatement<{ queue: string; items: number; oldestAgeSeconds: number }>;
  /** Whether a queue uses the stale-pending bound (then the statements take it as their last value). */
  readonly usesStalePending: boolean;
  /** The metric label of each queue (`card_operations_unknown`), by its name. */
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * Every queue is one filter served by an index on (filter, created_at, id), read backwards: counting
 * and the first rows never scan the table. Each statement is listed in src/queries/attention.sql.
 */
export function attentionStatements<Fields extends RowFields>(table: string, definition: AttentionDefinition<Fields>): AttentionStatements {
  const { row, queues } = definition;
  // The row as the report reads it: the queue's name, then fields it formats by name (amount, currency, times).
  const rowColumns: { queue: Column<string> } & Columns = { queue: column.text, ...row.columns };
  const condition = (queue: AttentionQueueDefinition, staleBefore: string) =>
    queue.stalePending ? `${queue.where} AND created_at < ${staleBefore}` : queue.where;
  const labels = Object.fromEntries(queues.map((q) => [q.name, `${table}_${q.name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`]));
  return {
    usesStalePending: queues.some((q) => q.stalePending),
    labels,
    counts: sqlStatement(
      'attention',
      'AttentionRepository.attention',
      `attention_counts_${table}`,
      queues
        .map((q) => `SELECT '${q.name}'::text AS queue, count(*)::int AS count FROM "${table}" WHERE ${condition(q, '$1::timestamptz')}`)
        .join('\nUNION ALL '),
      { queue: column.text, count: column.int4 },
    ),
    rows: sqlStatement(
      'attention',
      'AttentionRepository.attention',
      `attention_rows_${table}`,
      `
      SELECT q.* FROM (${queues
        .map(
          (q) => `
        (SELECT '${q.name}'::text AS queue, ${row.select('a')}
         FROM "${table}" a WHERE ${condition(q, '$2::timestamptz')} ORDER BY a.created_at, a.id LIMIT $1::int)`,
        )
        .join('\n        UNION ALL')}
      ) q
      ORDER BY q.queue, q."createdAt", q.id`,
      rowColumns,
    ),
    waiting: sqlStatement(
      'attention',
      'AttentionRepository.waiting',
      `waiting_${table}`,
      `
      SELECT queue, count(*)::int AS items, extract(epoch FROM now() - min(created_at))::float8 AS "oldestAgeSeconds"
      FROM (${queues
        .map(
          (q) => `
        SELECT '${labels[q.name]}'::text AS queue, created_at FROM "${table}"
        WHERE ${condition(q, 'now() - make_interval(secs => $1::float8)')}`,
        )
        .join('\n        UNION ALL')}
      ) AS waiting
      GROUP BY queue`,
      { queue: column.text, items: column.int4, oldestAgeSeconds: column.float8 },
    ),
  };
}
