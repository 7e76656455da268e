import { namedParameters } from '../database/named-parameters';
import { column, sqlStatement, type StatementRow } from '../database/sql-statement';
import { idempotencyLinkCte } from '../idempotency/idempotency.repository';
import { agentBudgetTakeCte, BUDGET_SHARE_COLUMNS, BUDGET_SHARE_SELECT } from '../provider/agent-budget-take';
import type { NewOrder, OrderRecord } from './order.types';
import { CHANGE_COLUMNS, eventJson, ORDER_ROW } from './orders.rows';
import { repository } from './orders.statements';

/** The new order: its id, then its fields (NewOrder), as $1 to $10 of CREATE_ORDER. */
export const NEW_ORDER = namedParameters({
  id: column.uuid,
  reference: column.text,
  customerId: column.text,
  amount: column.numeric,
  currency: column.text,
  service: column.int4,
  wallet: column.text,
  description: column.text,
  payer: column.text,
  payerEmail: column.text,
});
const o = NEW_ORDER;

/**
 * Everything before the pay-in, in one round trip: the request's claim of its Idempotency-Key
 * linked to the order (idempotencyLinkCte, $11 to $19: the recovery point), the PENDING order
 * marked as handed to the provider, its first history entry, its stream event, and the pay-in's
 * slot of the /api/agent budget and of the customer's share ($20 to $22, budgetSlotValues; NULL
 * takes none). When the key is held by another request, or the customer's share is spent, no order
 * is stored (amount NULL) and no slot is taken. It answers only what the database decided (the
 * stored amount, the one `now()` of created_at, submitted_at and updated_at, the change, the
 * customer's share): the rest of the new row is its parameters (createdOrder).
 */
export const CREATE_ORDER = sqlStatement(
  repository,
  'create',
  'orders_create',
  `
  WITH ${idempotencyLinkCte(11)}, ${agentBudgetTakeCte(20, '$11::uuid IS NULL OR EXISTS (SELECT 1 FROM link)')}, created AS (
    INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email,
                        submitted_at, created_at, updated_at)
    SELECT ${o.id}, ${o.reference}, ${o.customerId}, 'PENDING', ${o.amount}, ${o.currency}, ${o.service}, ${o.wallet}, ${o.description},
      ${o.payer}, ${o.payerEmail}, now(), now(), now()
    FROM budget_share WHERE ($11::uuid IS NULL OR EXISTS (SELECT 1 FROM link)) AND NOT budget_share."customerRefused"
    RETURNING *
  ), change AS (
    INSERT INTO order_status_changes (order_id, from_status, to_status, reason, detail)
    SELECT id, NULL, 'PENDING', 'created', 'Order stored, not yet sent to the provider' FROM created
    RETURNING id, at
  )
  SELECT trim_scale(created.amount)::text AS amount, created.created_at AS "createdAt", change.id::text AS "changeId",
    change.at AS "changeAt",
    CASE WHEN created.id IS NOT NULL
      THEN pg_notify('order_status', ${eventJson('created.id', 'change', 'NULL', "'PENDING'", "'created'")}) IS NULL END AS "notified",
    EXISTS (SELECT 1 FROM budget) AS "budgetTaken", ${BUDGET_SHARE_SELECT}
  FROM budget_share LEFT JOIN (created CROSS JOIN change) ON true`,
  {
    amount: ORDER_ROW.columns.amount.orNull,
    createdAt: ORDER_ROW.columns.createdAt.orNull,
    ...CHANGE_COLUMNS,
    budgetTaken: column.bool,
    ...BUDGET_SHARE_COLUMNS,
  },
);

/** A row of CREATE_ORDER whose order was stored. */
export type CreatedOrderRow = StatementRow<typeof CREATE_ORDER> & { amount: string; createdAt: Date };

/** Whether CREATE_ORDER stored the order (it does not when the key is held or the customer's share is spent). */
export function orderWasCreated(row: StatementRow<typeof CREATE_ORDER>): row is CreatedOrderRow {
  return row.amount !== null && row.createdAt !== null;
}

/**
 * The order CREATE_ORDER stored: its parameters, what the database decided (the amount as stored,
 * the one `now()` of its three times) and the columns' defaults.
 */
export function createdOrder(id: string, order: NewOrder, row: CreatedOrderRow): OrderRecord {
  return {
    id,
    ...order,
    amount: row.amount,
    status: 'PENDING',
    providerReference: null,
    providerTransactionReference: null,
    failureReason: null,
    needsReview: false,
    submittedAt: row.createdAt,
    processingSince: null,
    createdAt: row.createdAt,
    updatedAt: row.createdAt,
  };
}
