import { asText, defineRow, trimmedAmount } from '../database/row-declaration';
import { column } from '../database/sql-statement';
import { registerOperationTable } from '../provider-operations/operation-tables';
import { MANUAL_ORDER_OUTCOMES } from './order.types';

/** The resource type on idempotency records: a pay-in's request answers its order. */
export const ORDER_RESOURCE = 'order';

/**
 * Pay-in orders as an operation type of the provider-operation lifecycle (ARCHITECTURE.md),
 * declared once: FAILED when refused or provably not sent, UNKNOWN when the answer was lost or our
 * code failed after the call may have been sent. Their sweep (OrderExpiryJob, with expiry) and the
 * write of a decision (with its history entry and live event, under the order's row lock that the
 * provider's callbacks also take) are the orders area's; a person may also decide an EXPIRED order,
 * or a PENDING one older than the interrupted-work window. Four queues of the attention report.
 */
export const PAYIN_ORDERS_TABLE = registerOperationTable({
  table: 'orders',
  statusType: 'OrderStatus',
  outcomes: { refused: 'FAILED', not_sent: 'FAILED', lost: 'UNKNOWN', unexpected: 'UNKNOWN' },
  recovery: { [ORDER_RESOURCE]: ['orders.create'] },
  resolution: {
    outcomes: MANUAL_ORDER_OUTCOMES,
    resolvable: ['UNKNOWN', 'EXPIRED'],
    stalePending: true,
    audit: { action: 'order.resolved', resourceType: 'order' },
    auditDetails: [],
    notResolvable: { code: 'order_not_resolvable', noun: 'order' },
  },
  attention: {
    row: defineRow({
      id: column.uuid.from('id'),
      reference: column.text.from('reference'),
      status: column.text.from(asText('status')),
      amount: column.text.from(trimmedAmount('amount')),
      currency: column.text.from(asText('currency')),
      needsReview: column.bool.from('needs_review'),
      createdAt: column.timestamptz.from('created_at'),
      updatedAt: column.timestamptz.from('updated_at'),
    }),
    queues: [
      { name: 'unknown', where: `status = 'UNKNOWN'` },
      { name: 'expired', where: `status = 'EXPIRED'` },
      { name: 'stalePending', where: `status = 'PENDING'`, stalePending: true },
      { name: 'needsReview', where: 'needs_review = true' },
    ],
  },
  ownSweepAndResolution: true,
});
