import { column, isoTimeSql, sqlStatement, type RowOf } from '../database/sql-statement';
import { keysetListStatements, type ListFilter } from '../database/list-queries';
import { idempotencyAnswerCte } from '../idempotency/idempotency.repository';
import { ORDER_STATUSES, type OrderDetailRecord, type OrderFilter, type OrderStatus, type OrderStatusEvent } from './order.types';

/** The written-out SQL of OrdersRepository: its hot paths, lists, export and background work (listed in src/queries/orders.repository.sql). */
export const repository = 'orders.repository';

/** An order row as OrderRecord; the amount without the trailing zeros of numeric(24,4), as Prisma's Decimal gives it. */
const orderColumns = (t: string) => `${t}.id::text AS id, ${t}.reference, ${t}.customer_id AS "customerId", ${t}.status,
  trim_scale(${t}.amount)::text AS amount, ${t}.currency, ${t}.service, ${t}.wallet, ${t}.description, ${t}.payer,
  ${t}.payer_email AS "payerEmail", ${t}.provider_reference AS "providerReference",
  ${t}.provider_transaction_reference AS "providerTransactionReference", ${t}.failure_reason AS "failureReason",
  ${t}.needs_review AS "needsReview", ${t}.submitted_at AS "submittedAt", ${t}.processing_since AS "processingSince",
  ${t}.created_at AS "createdAt", ${t}.updated_at AS "updatedAt"`;

const orderStatus = column.enum('OrderStatus', ORDER_STATUSES);

/** The columns of an order that change after its creation (status, provider's answer, review, times), as in orderColumns. */
const submissionColumns = (t: string) => `${t}.status, ${t}.provider_reference AS "providerReference",
  ${t}.provider_transaction_reference AS "providerTransactionReference", ${t}.failure_reason AS "failureReason",
  ${t}.needs_review AS "needsReview", ${t}.submitted_at AS "submittedAt", ${t}.processing_since AS "processingSince",
  ${t}.updated_at AS "updatedAt"`;

/** The columns of orderColumns: an OrderRecord. */
export const ORDER_COLUMNS = {
  id: column.text,
  reference: column.text,
  customerId: column.text,
  status: orderStatus,
  amount: column.text,
  currency: column.varchar,
  service: column.int4,
  wallet: column.text,
  description: column.text,
  payer: column.text,
  payerEmail: column.text,
  providerReference: column.text.orNull,
  providerTransactionReference: column.text.orNull,
  failureReason: column.text.orNull,
  needsReview: column.bool,
  submittedAt: column.timestamptz.orNull,
  processingSince: column.timestamptz.orNull,
  createdAt: column.timestamptz,
  updatedAt: column.timestamptz,
};

/** The columns of submissionColumns. */
const SUBMISSION_COLUMNS = {
  status: ORDER_COLUMNS.status,
  providerReference: ORDER_COLUMNS.providerReference,
  providerTransactionReference: ORDER_COLUMNS.providerTransactionReference,
  failureReason: ORDER_COLUMNS.failureReason,
  needsReview: ORDER_COLUMNS.needsReview,
  submittedAt: ORDER_COLUMNS.submittedAt,
  processingSince: ORDER_COLUMNS.processingSince,
  updatedAt: ORDER_COLUMNS.updatedAt,
};

/** The change a hot-path write made, as its statement returns it alongside the order. */
export const CHANGE_COLUMNS = {
  changeId: column.text.orNull,
  changeAt: column.timestamptz.orNull,
  notified: column.bool.orNull,
};
export type ChangeColumns = Pick<RowOf<typeof CHANGE_COLUMNS>, 'changeId' | 'changeAt'>;

/** The stream event of a change, as JSON text for pg_notify; `at` in the format of Date#toISOString. */
export const eventJson = (order: string, change: string, from: string, to: string, reason: string) =>
  `json_build_object('orderId', ${order}, 'changeId', ${change}.id::text, 'fromStatus', ${from}, 'status', ${to}, 'reason', ${reason},
    'at', ${isoTimeSql(`${change}.at`)})::text`;

export const FIND_ORDER = sqlStatement(
  repository,
  'findById',
  'orders_find',
  `
  SELECT ${orderColumns('o')} FROM orders o WHERE o.id = $1::uuid`,
  ORDER_COLUMNS,
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
  {
    ...ORDER_COLUMNS,
    history: column.builtJson<JsonHistoryEntry[]>(),
    callbacks: column.builtJson<JsonCallback[]>(),
  },
);

/**
 * Records the provider's answer in one guarded statement: the row is locked and read as it was
 * (the FOR UPDATE subquery), only a PENDING order moves (with its history entry and stream
 * event), and the provider's references are kept whatever the status. It answers the columns an
 * order's life may change (SUBMISSION_COLUMNS); the others are as the order was created.
 */
export const RECORD_SUBMISSION = sqlStatement(
  repository,
  'recordSubmission',
  'orders_record_submission',
  `
  WITH previous AS (
    SELECT id, status, needs_review, provider_reference, provider_transaction_reference, failure_reason
    FROM orders WHERE id = $1::uuid FOR UPDATE
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
  ), ${idempotencyAnswerCte(
    '$8',
    '$9',
    `$10::text || (SELECT ${isoTimeSql('updated_at')} FROM updated) || $11::text`,
    `EXISTS (SELECT 1 FROM previous WHERE status = 'PENDING' AND NOT needs_review AND provider_reference IS NULL
        AND provider_transaction_reference IS NULL AND failure_reason IS NULL)`,
  )}
  SELECT ${submissionColumns('updated')}, change.id::text AS "changeId", change.at AS "changeAt",
    CASE WHEN change.id IS NOT NULL
      THEN pg_notify('order_status', ${eventJson('updated.id', 'change', "'PENDING'", '$2::text', '$6::text')}) IS NULL END AS "notified",
    EXISTS (SELECT 1 FROM answer) AS "answerStored"
  FROM updated LEFT JOIN change ON true`,
  { ...SUBMISSION_COLUMNS, ...CHANGE_COLUMNS, answerStored: column.bool },
);

export type JsonHistoryEntry = Omit<OrderDetailRecord['history'][number], 'at'> & { at: string };
export type JsonCallback = Omit<OrderDetailRecord['callbacks'][number], 'receivedAt'> & { receivedAt: string };

/** A row of a hot-path write without the columns of its change (CHANGE_COLUMNS): the order's columns it returned. */
export function withoutChange<R extends object>(row: R & Partial<RowOf<typeof CHANGE_COLUMNS>>): Omit<R, keyof typeof CHANGE_COLUMNS> {
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
export const LIST_FILTERS: readonly ListFilter<OrderFilter>[] = [
  ['customerId', 'cust', (n: number) => `o.customer_id = $${n}::text`],
  ['status', 'status', (n: number) => `o.status = $${n}::"OrderStatus"`],
  ['currency', 'cur', (n: number) => `o.currency = $${n}::text`],
  ['needsReview', 'review', (n: number) => `o.needs_review = $${n}::boolean`],
];

/**
 * A page of orders, or a batch of the CSV export: only what either shows, the times already written
 * as ISO text by PostgreSQL. Parsing them into Dates to write them back out was most of the export's
 * time, and on a page of 50 the Dates (four per row) were most of what a request allocated.
 */
export const LIST_ORDERS = keysetListStatements({
  repository,
  usedBy: 'list',
  prefix: 'orders_page',
  from: 'orders o',
  time: 'o.created_at',
  select: `o.id::text AS id, o.reference, ${isoTimeSql('o.created_at')} AS "createdAt", ${isoTimeSql('o.updated_at')} AS "updatedAt",
    o.status, trim_scale(o.amount)::text AS amount, o.currency, o.service, o.wallet, o.payer,
    o.payer_email AS "payerEmail", o.description, o.provider_reference AS "providerReference",
    o.provider_transaction_reference AS "providerTransactionReference", o.failure_reason AS "failureReason",
    o.needs_review AS "needsReview"`,
  columns: {
    id: column.text,
    reference: column.text,
    createdAt: column.text,
    updatedAt: column.text,
    status: orderStatus,
    amount: column.text,
    currency: column.varchar,
    service: column.int4,
    wallet: column.text,
    payer: column.text,
    payerEmail: column.text,
    description: column.text,
    providerReference: column.text.orNull,
    providerTransactionReference: column.text.orNull,
    failureReason: column.text.orNull,
    needsReview: column.bool,
  },
  filters: LIST_FILTERS,
});

/** An order's change, as StatusChangeRecord (its id as text: a bigint). */
const changeColumns = (c: string) => `${c}.id::text AS id, ${c}.order_id::text AS "orderId", ${c}.from_status AS "fromStatus",
  ${c}.to_status AS "toStatus", ${c}.reason, ${c}.detail, ${c}.callback_id::text AS "callbackId", ${c}.actor, ${c}.note, ${c}.at`;
const CHANGE_ROW_COLUMNS = {
  id: column.text,
  orderId: column.text,
  fromStatus: orderStatus.orNull,
  toStatus: orderStatus,
  reason: column.text,
  detail: column.text.orNull,
  callbackId: column.text.orNull,
  actor: column.text.orNull,
  note: column.text.orNull,
  at: column.timestamptz,
};

export const ORDER_HISTORY = sqlStatement(
  repository,
  'history',
  'orders_history',
  `
  SELECT ${changeColumns('c')} FROM order_status_changes c WHERE c.order_id = $1::uuid ORDER BY c.id`,
  CHANGE_ROW_COLUMNS,
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
  CHANGE_ROW_COLUMNS,
);

export const COUNT_BY_STATUS = sqlStatement(
  repository,
  'countByStatus',
  'orders_count_by_status',
  `
  SELECT status, count(*)::int AS count FROM orders GROUP BY status`,
  { status: orderStatus, count: column.int4 },
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
    change.from_status AS "fromStatus", change.to_status AS status, change.reason,
    CASE WHEN change.id IS NOT NULL
      THEN pg_notify('order_status', ${eventJson('change.order_id', 'change', 'change.from_status', 'change.to_status', 'change.reason')}) IS NULL END
      AS "notified"
  FROM sweeper LEFT JOIN change ON true
  ORDER BY change.id`,
  {
    locked: column.bool.orNull,
    orderId: column.text.orNull,
    changeId: column.text.orNull,
    changeAt: column.timestamptz.orNull,
    fromStatus: orderStatus.orNull,
    status: orderStatus.orNull,
    reason: column.text.orNull,
    notified: column.bool.orNull,
  },
);

/** The order, locked until the transaction ends (callbacks, manual decisions). */
export const LOCK_ORDER = sqlStatement(
  repository,
  'lockForCallback, resolveManually, clearReview',
  'orders_lock',
  `
  SELECT ${orderColumns('o')} FROM orders o WHERE o.id = $1::uuid FOR UPDATE`,
  ORDER_COLUMNS,
);

/** A change of a locked order, with its stream event (pg_notify delivers it only once the transaction commits). */
export const RECORD_CHANGE = sqlStatement(
  repository,
  'applyCallbackTransition, resolveManually, clearReview',
  'orders_record_change',
  `
  WITH change AS (
    INSERT INTO order_status_changes (order_id, from_status, to_status, reason, detail, callback_id, actor, note)
    VALUES ($1::uuid, $2::"OrderStatus", $3::"OrderStatus", $4, $5, $6::uuid, $7, $8)
    RETURNING id, at
  )
  SELECT change.id::text AS "changeId", change.at AS "changeAt",
    pg_notify('order_status', ${eventJson('$1::text', 'change', '$2::text', '$3::text', '$4::text')}) IS NULL AS "notified"
  FROM change`,
  { changeId: column.text, changeAt: column.timestamptz, notified: column.bool },
);

/** A callback's decision on the locked order. */
export const DECIDE_BY_CALLBACK = sqlStatement(
  repository,
  'applyCallbackTransition',
  'orders_decide_by_callback',
  `
  UPDATE orders SET status = $2::"OrderStatus", updated_at = now(),
    failure_reason = CASE WHEN $2::"OrderStatus" = 'FAILED' THEN $3 ELSE failure_reason END
  WHERE id = $1::uuid`,
);

/** A callback that contradicts the order's final status flags it for a person. */
export const FLAG_FOR_REVIEW = sqlStatement(
  repository,
  'applyCallbackTransition',
  'orders_flag_for_review',
  `
  UPDATE orders SET needs_review = true, updated_at = now() WHERE id = $1::uuid`,
);

/** A person's decision, guarded: only a resolvable status ($4) or a PENDING order older than $5 seconds moves. */
export const RESOLVE_MANUALLY = sqlStatement(
  repository,
  'resolveManually',
  'orders_resolve_manually',
  `
  UPDATE orders o SET status = $2::"OrderStatus", updated_at = now(), failure_reason = COALESCE($3, o.failure_reason)
  WHERE o.id = $1::uuid
    AND (o.status::text = ANY($4::text[])
      OR (o.status = 'PENDING' AND o.created_at < now() - make_interval(secs => $5::float8)))
  RETURNING ${orderColumns('o')}`,
  ORDER_COLUMNS,
);

/** Clears the review flag, guarded: only a flagged order moves. */
export const CLEAR_REVIEW = sqlStatement(
  repository,
  'clearReview',
  'orders_clear_review',
  `
  UPDATE orders o SET needs_review = false, updated_at = now() WHERE o.id = $1::uuid AND o.needs_review
  RETURNING ${orderColumns('o')}`,
  ORDER_COLUMNS,
);
