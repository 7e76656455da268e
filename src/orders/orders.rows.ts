import { pickFields, defineRow, trimmedAmount } from '../database/row-declaration';
import { column, isoTimeSql, type RowOf } from '../database/sql-statement';
import { ORDER_STATUSES, type OrderStatus, type OrderStatusEvent } from './order.types';

// The rows of the orders tables, one declaration each (defineRow: select list, columns and mapper),
// and the stream event every hot-path write publishes with pg_notify.

const orderStatus = column.enum('OrderStatus', ORDER_STATUSES);

/** An order as OrderRecord; the amount without the trailing zeros of numeric(24,4), as Prisma's Decimal gave it. */
const ORDER_FIELDS = {
  id: column.text.from((o) => `${o}.id::text`),
  reference: column.text.from('reference'),
  customerId: column.text.from('customer_id'),
  status: orderStatus.from('status'),
  amount: column.text.from(trimmedAmount('amount')),
  currency: column.varchar.from('currency'),
  service: column.int4.from('service'),
  wallet: column.text.from('wallet'),
  description: column.text.from('description'),
  payer: column.text.from('payer'),
  payerEmail: column.text.from('payer_email'),
  providerReference: column.text.orNull.from('provider_reference'),
  providerTransactionReference: column.text.orNull.from('provider_transaction_reference'),
  failureReason: column.text.orNull.from('failure_reason'),
  needsReview: column.bool.from('needs_review'),
  submittedAt: column.timestamptz.orNull.from('submitted_at'),
  processingSince: column.timestamptz.orNull.from('processing_since'),
  createdAt: column.timestamptz.from('created_at'),
  updatedAt: column.timestamptz.from('updated_at'),
};
export const ORDER_ROW = defineRow(ORDER_FIELDS);

/** The columns of an order that change after its creation (status, provider's answer, review, times). */
export const SUBMISSION_ROW = defineRow(
  pickFields(ORDER_FIELDS, [
    'status',
    'providerReference',
    'providerTransactionReference',
    'failureReason',
    'needsReview',
    'submittedAt',
    'processingSince',
    'updatedAt',
  ]),
);

/**
 * An order as a page of the list or a batch of the CSV export reads it (OrderListRow): only what
 * either shows, the times already written as ISO text by PostgreSQL. Parsing them into Dates to write
 * them back out was most of the export's time, and on a page of 50 the Dates (four per row) were
 * most of what a request allocated.
 */
export const ORDER_LIST_ROW = defineRow({
  id: ORDER_FIELDS.id,
  reference: ORDER_FIELDS.reference,
  createdAt: column.text.from((o) => isoTimeSql(`${o}.created_at`)),
  updatedAt: column.text.from((o) => isoTimeSql(`${o}.updated_at`)),
  ...pickFields(ORDER_FIELDS, ['status', 'amount', 'currency', 'service', 'wallet', 'payer', 'payerEmail', 'description']),
  ...pickFields(ORDER_FIELDS, ['providerReference', 'providerTransactionReference', 'failureReason', 'needsReview']),
});

/** An order's change, as StatusChangeRecord: its bigint id read as one. */
export const STATUS_CHANGE_ROW = defineRow({
  id: column.int8.from('id').as(BigInt),
  orderId: column.text.from((c) => `${c}.order_id::text`),
  fromStatus: orderStatus.orNull.from('from_status'),
  toStatus: orderStatus.from('to_status'),
  reason: column.text.from('reason'),
  detail: column.text.orNull.from('detail'),
  callbackId: column.text.orNull.from((c) => `${c}.callback_id::text`),
  actor: column.text.orNull.from('actor'),
  note: column.text.orNull.from('note'),
  at: column.timestamptz.from('at'),
});

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

export function eventOf(
  orderId: string,
  change: ChangeColumns,
  fromStatus: OrderStatus | null,
  status: OrderStatus,
  reason: string,
): OrderStatusEvent {
  return { orderId, changeId: String(change.changeId), fromStatus, status, reason, at: (change.changeAt as Date).toISOString() };
}
