import { asText, defineRow, trimmedAmount } from '../database/row-declaration';
import { column } from '../database/sql-statement';
import { registerOperationTable } from '../provider-operations/operation-tables';
import { MANUAL_CARD_OPERATION_OUTCOMES } from './card.types';

/**
 * Card operations as an operation type of the provider-operation lifecycle (ARCHITECTURE.md),
 * declared once: FAILED when refused or provably not sent, UNKNOWN when the answer was lost or our
 * code failed after the call may have been sent; a retry of a creation, a top-up or withdrawal, or a
 * sync whose request died answers the stored operation; swept when interrupted, decided by a person
 * when UNKNOWN, in the attention report while UNKNOWN.
 */
export const CARD_OPERATIONS_TABLE = registerOperationTable({
  table: 'card_operations',
  statusType: 'CardOperationStatus',
  outcomes: { refused: 'FAILED', not_sent: 'FAILED', lost: 'UNKNOWN', unexpected: 'UNKNOWN' },
  recovery: {
    card_creation: ['cards.create'],
    card_operation: ['cards.topup', 'cards.withdraw'],
    card_sync: ['cards.sync'],
  },
  resolution: {
    outcomes: MANUAL_CARD_OPERATION_OUTCOMES,
    resolvable: ['UNKNOWN'],
    audit: { action: 'card_operation.resolved', resourceType: 'card_operation' },
    auditDetails: ['kind', 'cardId'],
    notResolvable: { code: 'card_operation_not_resolvable', noun: 'card operation' },
  },
  attention: {
    row: defineRow({
      id: column.uuid.from('id'),
      kind: column.text.from(asText('kind')),
      cardId: column.uuid.orNull.from('card_id'),
      cardUserId: column.uuid.from('card_user_id'),
      amount: column.text.orNull.from(trimmedAmount('amount')),
      currency: column.text.orNull.from(asText('currency')),
      failureReason: column.text.orNull.from('failure_reason'),
      createdAt: column.timestamptz.from('created_at'),
    }),
    queues: [{ name: 'unknown', where: `status = 'UNKNOWN'` }],
  },
});
