import { column, isoTimeSql, sqlStatement } from '../database/sql-statement';
import { keysetListStatements, type ListFilter } from '../database/list-queries';
import { namedParameters, uncast } from '../database/named-parameters';
import { idempotencyAnswerCte } from '../idempotency/idempotency.repository';
import { ORDER_STATUSES, type OrderDetailRecord, type OrderFilter } from './order.types';
import { CHANGE_COLUMNS, eventJson, ORDER_LIST_ROW, ORDER_ROW, STATUS_CHANGE_ROW, SUBMISSION_ROW } from './orders.rows';

/** The written-out SQL of OrdersRepository: its hot paths, lists, export and background work (listed in src/queries/orders.repository.sql). */
export const repository = 'orders.repository';

const orderStatus = column.enum('OrderStatus', ORDER_STATUSES);

export const FIND_ORDER = sqlStatement(
  repository,
  'findById',
  'orders_find',
  `
  SELECT ${ORDER_ROW.select('o')} FROM orders o WHERE o.id = $1::uuid`,
  ORDER_ROW.columns,
);

/** The order with its history and callbacks, in one statement; the owner (when given) is part of the WHERE. */
export const FIND_ORDER_DETAIL = sqlStatement(
  repository,
  'findDetail',
  'orders_detail',
  `
  SELECT ${ORDER_ROW.select('o')},
    (SELECT COALESCE(json_agg(json_build_object('fromStatus', c.from_status, 'toStatus', c.to_status, 'reason', c.reason,
              'detail', c.detail, 'callbackId', c.callback_id, 'actor', c.actor, 'note', c.note, 'at', c.at) ORDER BY c.id), '[]'::json)
       FROM order_status_changes c WHERE c.order_id = o.id) AS history,
    (SELECT COALESCE(json_agg(json_build_object('id', p.id, 'outcome', p.outcome, 'result', p.result, 'receivedAt', p.received_at)
              ORDER BY p.received_at, p.id), '[]'::json)
       FROM provider_callbacks p WHERE p.order_id = o.id) AS callbacks
  FROM orders o
  WHERE o.id = $1::uuid AND ($2::text IS NULL OR o.customer_id = $2::text)`,
  {
    ...ORDER_ROW.columns,
    history: column.builtJson<JsonHistoryEntry[]>(),
    callbacks: column.builtJson<JsonCallback[]>(),
  },
);

export const SUBMISSION_PARAMETERS = namedParameters({
  orderId: column.uuid,
  status: orderStatus,
  providerReference: column.text.orNull,
  providerTransactionReference: column.text.orNull,
  failureReason: column.text.orNull,
  reason: column.text,
  detail: column.text.orNull,
  answerStatus: column.int4.orNull,
  answerRecordId: column.uuid.orNull,
  answerTextBeforeUpdatedAt: column.text.orNull,
  answerTextAfterUpdatedAt: column.text.orNull,
});
const p = SUBMISSION_PARAMETERS;

/**
 * Records the provider's answer in one guarded statement: the row is locked and read as it was
 * (the FOR UPDATE subquery), only a PENDING order moves (with its history entry and stream
 * event), and the provider's references are kept whatever the status. It answers the columns an
 * order's life may change (SUBMISSION_ROW); the others are as the order was created.
 */
export const RECORD_SUBMISSION = sqlStatement(
  repository,
  'recordSubmission',
  'orders_record_submission',
  `
  WITH previous AS (
    SELECT id, status, needs_review, provider_reference, provider_transaction_reference, failure_reason
    FROM orders WHERE id = ${p.orderId} FOR UPDATE
  ), updated AS (
    UPDATE orders o SET
      status = CASE WHEN previous.status = 'PENDING' THEN ${p.status} ELSE o.status END,
      provider_reference = COALESCE(o.provider_reference, ${p.providerReference}),
      provider_transaction_reference = COALESCE(o.provider_transaction_reference, ${p.providerTransactionReference}),
      processing_since = CASE WHEN previous.status = 'PENDING' AND ${p.status} = 'PROCESSING' THEN now() ELSE o.processing_since END,
      failure_reason = CASE WHEN previous.status = 'PENDING' AND ${p.status} = 'FAILED' THEN ${p.failureReason} ELSE o.failure_reason END,
      updated_at = now()
    FROM previous WHERE o.id = previous.id
    RETURNING o.*, previous.status AS previous_status
  ), change AS (
    INSERT INTO order_status_changes (order_id, from_status, to_status, reason, detail)
    SELECT id, 'PENDING', ${p.status}, ${p.reason}, ${p.detail} FROM updated WHERE previous_status = 'PENDING'
    RETURNING id, at
  ), ${idempotencyAnswerCte(
    uncast(p.answerStatus),
    uncast(p.answerRecordId),
    `${p.answerTextBeforeUpdatedAt} || (SELECT ${isoTimeSql('updated_at')} FROM updated) || ${p.answerTextAfterUpdatedAt}`,
    `EXISTS (SELECT 1 FROM previous WHERE status = 'PENDING' AND NOT needs_review AND provider_reference IS NULL
        AND provider_transaction_reference IS NULL AND failure_reason IS NULL)`,
  )}
  SELECT ${SUBMISSION_ROW.select('updated')}, change.id::text AS "changeId", change.at AS "changeAt",
    CASE WHEN change.id IS NOT NULL
      THEN pg_notify('order_status', ${eventJson('updated.id', 'change', "'PENDING'", `${p.status}::text`, p.reason)}) IS NULL END AS "notified",
    EXISTS (SELECT 1 FROM answer) AS "answerStored"
  FROM updated LEFT JOIN change ON true`,
  { ...SUBMISSION_ROW.columns, ...CHANGE_COLUMNS, answerStored: column.bool },
);

export type JsonHistoryEntry = Omit<OrderDetailRecord['history'][number], 'at'> & { at: string };
export type JsonCallback = Omit<OrderDetailRecord['callbacks'][number], 'receivedAt'> & { receivedAt: string };

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

/** A page of orders, or a batch of the CSV export (ORDER_LIST_ROW). */
export const LIST_ORDERS = keysetListStatements({
  repository,
  usedBy: 'list',
  prefix: 'orders_page',
  from: 'orders o',
  time: 'o.created_at',
  select: ORDER_LIST_ROW.select('o'),
  columns: ORDER_LIST_ROW.columns,
  filters: LIST_FILTERS,
});

export const ORDER_HISTORY = sqlStatement(
  repository,
  'history',
  'orders_history',
  `
  SELECT ${STATUS_CHANGE_ROW.select('c')} FROM order_status_changes c WHERE c.order_id = $1::uuid ORDER BY c.id`,
  STATUS_CHANGE_ROW.columns,
);

/** The changes of each watched order ($1) after the change its streams have reached ($2, at the same place). */
export const CHANGES_AFTER = sqlStatement(
  repository,
  'changesAfter',
  'orders_changes_after',
  `
  SELECT ${STATUS_CHANGE_ROW.select('c')}
  FROM unnest($1::uuid[], $2::bigint[]) AS watched(order_id, after_id)
  JOIN order_status_changes c ON c.order_id = watched.order_id AND c.id > watched.after_id
  ORDER BY c.id`,
  STATUS_CHANGE_ROW.columns,
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
  SELECT ${ORDER_ROW.select('o')} FROM orders o WHERE o.id = $1::uuid FOR UPDATE`,
  ORDER_ROW.columns,
);

export const CHANGE_PARAMETERS = namedParameters({
  orderId: column.uuid,
  fromStatus: orderStatus.orNull,
  toStatus: orderStatus,
  reason: column.text,
  detail: column.text.orNull,
  callbackId: column.uuid.orNull,
  actor: column.text.orNull,
  note: column.text.orNull,
});

/** A change of a locked order, with its stream event (pg_notify delivers it only once the transaction commits). */
export const RECORD_CHANGE = sqlStatement(
  repository,
  'applyCallbackTransition, resolveManually, clearReview',
  'orders_record_change',
  `
  WITH change AS (
    INSERT INTO order_status_changes (order_id, from_status, to_status, reason, detail, callback_id, actor, note)
    VALUES (${CHANGE_PARAMETERS.orderId}, ${CHANGE_PARAMETERS.fromStatus}, ${CHANGE_PARAMETERS.toStatus}, ${CHANGE_PARAMETERS.reason}, ${CHANGE_PARAMETERS.detail}, ${CHANGE_PARAMETERS.callbackId},
      ${CHANGE_PARAMETERS.actor}, ${CHANGE_PARAMETERS.note})
    RETURNING id, at
  )
  SELECT change.id::text AS "changeId", change.at AS "changeAt",
    pg_notify('order_status', ${eventJson(`${CHANGE_PARAMETERS.orderId}::text`, 'change', `${CHANGE_PARAMETERS.fromStatus}::text`, `${CHANGE_PARAMETERS.toStatus}::text`, CHANGE_PARAMETERS.reason)})
      IS NULL AS "notified"
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
  RETURNING ${ORDER_ROW.select('o')}`,
  ORDER_ROW.columns,
);

/** Clears the review flag, guarded: only a flagged order moves. */
export const CLEAR_REVIEW = sqlStatement(
  repository,
  'clearReview',
  'orders_clear_review',
  `
  UPDATE orders o SET needs_review = false, updated_at = now() WHERE o.id = $1::uuid AND o.needs_review
  RETURNING ${ORDER_ROW.select('o')}`,
  ORDER_ROW.columns,
);
