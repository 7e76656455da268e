import { sqlStatement } from '../database/sql-statement';
import type { NewOrder, OrderDetailRecord, OrderRecord, OrderStatus, OrderStatusEvent } from './order.types';

/** The hot-path SQL of OrdersRepository, written out (listed in src/queries/orders.repository.sql). */
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
