import { sqlStatement, type SqlStatement } from '../database/sql-statement';
import type { PageRequest } from '../common/pagination';
import type { NewOrder, OrderDetailRecord, OrderFilter, OrderRecord, OrderStatus, OrderStatusEvent } from './order.types';

/** The written-out SQL of OrdersRepository: its hot paths, lists, export and background work (listed in src/queries/orders.repository.sql). */
const repository = 'orders.repository';

/** An order row as OrderRecord; the amount without the trailing zeros of numeric(24,4), as Prisma's Decimal gives it. */
const orderColumns = (t: string) => `${t}.id::text AS id, ${t}.reference, ${t}.customer_id AS "customerId", ${t}.status::text AS status,
  trim_scale(${t}.amount)::text AS amount, ${t}.currency, ${t}.service, ${t}.wallet, ${t}.description, ${t}.payer,
  ${t}.payer_email AS "payerEmail", ${t}.provider_reference AS "providerReference",
  ${t}.provider_transaction_reference AS "providerTransactionReference", ${t}.failure_reason AS "failureReason",
  ${t}.needs_review AS "needsReview", ${t}.submitted_at AS "submittedAt", ${t}.processing_since AS "processingSince",
  ${t}.created_at AS "createdAt", ${t}.updated_at AS "updatedAt"`;

/** The stream event of a change, as JSON text for pg_notify; `at` in the format of Date#toISOString. */
const eventJson = (order: string, change: string, from: string, to: string, reason: string) =>
  `json_build_object('orderId', ${order}, 'changeId', ${change}.id::text, 'fromStatus', ${from}, 'status', ${to}, 'reason', ${reason},
    'at', to_char(${change}.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text`;

export const FIND_ORDER = sqlStatement(
  repository,
  'findById',
  'orders_find',
  `
  SELECT ${orderColumns('o')} FROM orders o WHERE o.id = $1::uuid`,
);

/** The order with its history and callbacks, in one statement; the owner (when given) is part of the WHERE. */
export const FIND_ORDER_DETAIL = sqlStatement(
  repository,
  'findDetail',
  'orders_detail',
  `
  SELECT ${orderColumns('o')},
    (SELECT COALESCE(json_agg(json_build_object('fromStatus', c.from_status, 'toStatus', c.to_status, 'reason', c.reason,
              'detail', c.detail, 'callbackId', c.callback_id, 'actor', c.actor, 'note', c.note, 'at', c.at) ORDER BY c.id), '[]'::json)
       FROM order_status_changes c WHERE c.order_id = o.id) AS history,
    (SELECT COALESCE(json_agg(json_build_object('id', p.id, 'outcome', p.outcome, 'result', p.result, 'receivedAt', p.received_at)
              ORDER BY p.received_at, p.id), '[]'::json)
       FROM provider_callbacks p WHERE p.order_id = o.id) AS callbacks
  FROM orders o
  WHERE o.id = $1::uuid AND ($2::text IS NULL OR o.customer_id = $2::text)`,
);

/** The fields of the new order, as $2 to $10 of CREATE_ORDER ($1 is its id). */
export const CREATE_ORDER_FIELDS = [
  'reference',
  'customerId',
  'amount',
  'currency',
  'service',
  'wallet',
  'description',
  'payer',
  'payerEmail',
] as const satisfies readonly (keyof NewOrder)[];

/**
 * Stores a PENDING order, marked as handed to the provider, with its first history entry and its
 * stream event, linked to the idempotency record of the request ($11, when there is one) in the
 * same statement: if that record is no longer this request's (a retry claimed it), nothing is
 * stored and no row comes back.
 */
export const CREATE_ORDER = sqlStatement(
  repository,
  'create',
  'orders_create',
  `
  WITH link AS (
    UPDATE idempotency_records SET resource_type = $12, resource_id = $1::uuid
    WHERE $11::uuid IS NOT NULL AND id = $11::uuid AND state = 'in_progress'
    RETURNING id
  ), created AS (
    INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email,
                        submitted_at, created_at, updated_at)
    SELECT $1::uuid, $2, $3, 'PENDING', $4::numeric, $5, $6::int, $7, $8, $9, $10, now(), now(), now()
    WHERE $11::uuid IS NULL OR EXISTS (SELECT 1 FROM link)
    RETURNING *
  ), change AS (
    INSERT INTO order_status_changes (order_id, from_status, to_status, reason, detail)
    SELECT id, NULL, 'PENDING', 'created', 'Order stored, not yet sent to the provider' FROM created
    RETURNING id, at
  )
  SELECT ${orderColumns('created')}, change.id::text AS "changeId", change.at AS "changeAt",
    pg_notify('order_status', ${eventJson('created.id', 'change', 'NULL', "'PENDING'", "'created'")}) IS NULL AS "notified"
  FROM created CROSS JOIN change`,
);

/**
 * Records the provider's answer in one guarded statement: the row is locked and read as it was
 * (the FOR UPDATE subquery), only a PENDING order moves (with its history entry and stream
 * event), and the provider's references are kept whatever the status.
 */
export const RECORD_SUBMISSION = sqlStatement(
  repository,
  'recordSubmission',
  'orders_record_submission',
  `
  WITH previous AS (
    SELECT id, status FROM orders WHERE id = $1::uuid FOR UPDATE
  ), updated AS (
    UPDATE orders o SET
      status = CASE WHEN previous.status = 'PENDING' THEN $2::"OrderStatus" ELSE o.status END,
      provider_reference = COALESCE(o.provider_reference, $3),
      provider_transaction_reference = COALESCE(o.provider_transaction_reference, $4),
      processing_since = CASE WHEN previous.status = 'PENDING' AND $2 = 'PROCESSING' THEN now() ELSE o.processing_since END,
      failure_reason = CASE WHEN previous.status = 'PENDING' AND $2 = 'FAILED' THEN $5 ELSE o.failure_reason END,
      updated_at = now()
    FROM previous WHERE o.id = previous.id
    RETURNING o.*, previous.status AS previous_status
  ), change AS (
    INSERT INTO order_status_changes (order_id, from_status, to_status, reason, detail)
    SELECT id, 'PENDING', $2::"OrderStatus", $6, $7 FROM updated WHERE previous_status = 'PENDING'
    RETURNING id, at
  )
  SELECT ${orderColumns('updated')}, change.id::text AS "changeId", change.at AS "changeAt",
    CASE WHEN change.id IS NOT NULL
      THEN pg_notify('order_status', ${eventJson('updated.id', 'change', "'PENDING'", '$2::text', '$6::text')}) IS NULL END AS "notified"
  FROM updated LEFT JOIN change ON true`,
);

/** The change a hot-path write made, as its statement returns it alongside the order. */
export interface ChangeColumns {
  changeId: string | null;
  changeAt: Date | null;
}
export type JsonHistoryEntry = Omit<OrderDetailRecord['history'][number], 'at'> & { at: string };
export type JsonCallback = Omit<OrderDetailRecord['callbacks'][number], 'receivedAt'> & { receivedAt: string };

export function withoutChange(row: OrderRecord & ChangeColumns & { notified?: unknown }): OrderRecord {
  const { changeId: _changeId, changeAt: _changeAt, notified: _notified, ...order } = row;
  return order;
}

export function eventOf(
  orderId: string,
  change: ChangeColumns,
  fromStatus: OrderStatus | null,
  status: OrderStatus,
  reason: string,
): OrderStatusEvent {
  return { orderId, changeId: String(change.changeId), fromStatus, status, reason, at: (change.changeAt as Date).toISOString() };
}

/**
 * The equality filters of the orders lists, in the order of their parameters ($6 on; $1 to $5 are
 * LIST_VALUES'), each with the short name its statements carry. One index per filter leads with
 * its column, then (created_at DESC, id DESC) (prisma/schema.prisma).
 */
export const LIST_FILTERS = [
  ['customerId', 'cust', (n: number) => `o.customer_id = $${n}::text`],
  ['status', 'status', (n: number) => `o.status = $${n}::"OrderStatus"`],
  ['currency', 'cur', (n: number) => `o.currency = $${n}::text`],
  ['needsReview', 'review', (n: number) => `o.needs_review = $${n}::boolean`],
] as const satisfies readonly (readonly [keyof OrderFilter, string, (n: number) => string])[];

/**
 * The parameters every list statement takes first: the window [from, to) ($1, $2), the keyset
 * position after which the page starts ($3 and $4: a time and an id) and the limit ($5). An absent
 * bound is an infinite one, so that the statement stays one per set of equality filters: its
 * generic plan still scans the filter's index in order with every bound as an index condition.
 */
export function listValues(filter: OrderFilter, page: PageRequest): unknown[] {
  return [
    filter.from ?? '-infinity',
    filter.to ?? 'infinity',
    page.after?.at ?? 'infinity',
    page.after?.id ?? 'ffffffff-ffff-ffff-ffff-ffffffffffff',
    page.limit,
    ...LIST_FILTERS.flatMap(([field]) => (filter[field] === undefined ? [] : [filter[field]])),
  ];
}

/**
 * One named statement per set of equality filters (16), each built from the same fixed fragments,
 * rather than one statement with `$n IS NULL OR column = $n` conditions: a prepared statement
 * runs on a generic plan after five executions, and a generic plan cannot know which of those
 * conditions are switched off, so it would filter every row of the time index instead of scanning
 * the filter's own index. With fixed conditions the generic plan is the custom one (checked at
 * 1,000,000 orders, and by test/finance/list-indexes.e2e-spec.ts on every set). Newest first by
 * (created_at, id): the id breaks ties, so that no row is skipped or shown twice across pages, and
 * the redundant `created_at <= $3` starts the index scan at the position.
 */
function listStatements(kind: string, usedBy: string, columns: string): SqlStatement[] {
  return Array.from({ length: 1 << LIST_FILTERS.length }, (_, set) => {
    const filters = LIST_FILTERS.filter((_filter, i) => set & (1 << i));
    const conditions = filters.map(([, , condition], i) => `\n        AND ${condition(6 + i)}`).join('');
    return sqlStatement(
      repository,
      usedBy,
      `orders_${kind}_${filters.map(([, short]) => short).join('_') || 'all'}`,
      `
      SELECT ${columns}
      FROM orders o
      WHERE o.created_at >= $1::timestamptz AND o.created_at < $2::timestamptz
        AND o.created_at <= $3::timestamptz AND (o.created_at, o.id) < ($3::timestamptz, $4::uuid)${conditions}
      ORDER BY o.created_at DESC, o.id DESC
      LIMIT $5::int`,
    );
  });
}

/** The statement of `statements` (from listStatements) for the equality filters `filter` sets. */
export function listStatementFor(statements: readonly SqlStatement[], filter: OrderFilter): SqlStatement {
  return statements[LIST_FILTERS.reduce((set, [field], i) => (filter[field] === undefined ? set : set | (1 << i)), 0)];
}

/** A time as Date#toISOString writes it (timestamptz(3): milliseconds are all there is). */
const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * A page of orders, or a batch of the CSV export: only what either shows, the times already written
 * as ISO text by PostgreSQL. Parsing them into Dates to write them back out was most of the export's
 * time, and on a page of 50 the Dates (four per row) were most of what a request allocated.
 */
export const LIST_ORDERS = listStatements(
  'page',
  'list',
  `o.id::text AS id, o.reference, ${isoTime('o.created_at')} AS "createdAt", ${isoTime('o.updated_at')} AS "updatedAt",
    o.status::text AS status, trim_scale(o.amount)::text AS amount, o.currency, o.service, o.wallet, o.payer,
    o.payer_email AS "payerEmail", o.description, o.provider_reference AS "providerReference",
    o.provider_transaction_reference AS "providerTransactionReference", o.failure_reason AS "failureReason",
    o.needs_review AS "needsReview"`,
);

/** An order's change, as StatusChangeRecord (its id as text: a bigint). */
const changeColumns = (c: string) => `${c}.id::text AS id, ${c}.order_id::text AS "orderId", ${c}.from_status::text AS "fromStatus",
  ${c}.to_status::text AS "toStatus", ${c}.reason, ${c}.detail, ${c}.callback_id::text AS "callbackId", ${c}.actor, ${c}.note, ${c}.at`;

export const ORDER_HISTORY = sqlStatement(
  repository,
  'history',
  'orders_history',
  `
  SELECT ${changeColumns('c')} FROM order_status_changes c WHERE c.order_id = $1::uuid ORDER BY c.id`,
);

/** The changes of each watched order ($1) after the change its streams have reached ($2, at the same place). */
export const CHANGES_AFTER = sqlStatement(
  repository,
  'changesAfter',
  'orders_changes_after',
  `
  SELECT ${changeColumns('c')}
  FROM unnest($1::uuid[], $2::bigint[]) AS watched(order_id, after_id)
  JOIN order_status_changes c ON c.order_id = watched.order_id AND c.id > watched.after_id
  ORDER BY c.id`,
);

export const COUNT_BY_STATUS = sqlStatement(
  repository,
  'countByStatus',
  'orders_count_by_status',
  `
  SELECT status::text AS status, count(*)::int AS count FROM orders GROUP BY status`,
);

/**
 * The expiry sweep in one statement, so in one transaction: the advisory lock ($1; one instance
 * sweeps, the others skip), PROCESSING orders past their deadline ($2 minutes) made EXPIRED and
 * PENDING ones handed to the provider more than $4 seconds ago made UNKNOWN, their history
 * entries ($3 and $5 their details) and their stream events, which pg_notify delivers only once
 * all of it has committed. The lock is taken before either UPDATE reads a row (the one-time
 * filter); a row a concurrent transaction changed meanwhile is checked again at its latest version
 * (READ COMMITTED), so an order a callback decided is left alone. One row with `locked` and no
 * change when nothing moved; the changes in the order of their ids, expired ones first.
 */
export const SWEEP_ORDERS = sqlStatement(
  repository,
  'sweep',
  'orders_sweep',
  `
  WITH sweeper AS (
    SELECT pg_try_advisory_xact_lock($1::bigint) AS locked
  ), expired AS (
    UPDATE orders SET status = 'EXPIRED', updated_at = now()
    WHERE (SELECT locked FROM sweeper) AND status = 'PROCESSING' AND processing_since < now() - make_interval(mins => $2::int)
    RETURNING id, 'PROCESSING'::"OrderStatus" AS from_status, 'EXPIRED'::"OrderStatus" AS to_status, 'expired' AS reason, $3::text AS detail
  ), interrupted AS (
    UPDATE orders SET status = 'UNKNOWN', updated_at = now()
    WHERE (SELECT locked FROM sweeper) AND status = 'PENDING' AND submitted_at < now() - make_interval(secs => $4::float8)
    RETURNING id, 'PENDING'::"OrderStatus", 'UNKNOWN'::"OrderStatus", 'submission_interrupted', $5::text
  ), change AS (
    INSERT INTO order_status_changes (order_id, from_status, to_status, reason, detail)
    SELECT * FROM expired UNION ALL SELECT * FROM interrupted
    RETURNING id, order_id, from_status, to_status, reason, at
  )
  SELECT sweeper.locked, change.order_id::text AS "orderId", change.id::text AS "changeId", change.at AS "changeAt",
    change.from_status::text AS "fromStatus", change.to_status::text AS status, change.reason,
    CASE WHEN change.id IS NOT NULL
      THEN pg_notify('order_status', ${eventJson('change.order_id', 'change', 'change.from_status', 'change.to_status', 'change.reason')}) IS NULL END
      AS "notified"
  FROM sweeper LEFT JOIN change ON true
  ORDER BY change.id`,
);
