import { asText, defineRow, trimmedAmount } from '../database/row-declaration';
import { column } from '../database/sql-statement';
import { registerOperationTable } from '../provider-operations/operation-tables';
import { MANUAL_DISTRIBUTION_OUTCOMES } from './distribution.types';

/** The resource type on idempotency records: a distribution's request answers the distribution. */
export const DISTRIBUTION_RESOURCE = 'distribution';

/**
 * Distributions as an operation type of the provider-operation lifecycle (ARCHITECTURE.md), declared
 * once: REJECTED when refused, removed when provably not sent (the paymentId is free again), UNKNOWN
 * when the answer was lost or our code failed after the call may have been sent; swept when
 * interrupted, decided by a person when UNKNOWN, in the attention report while UNKNOWN.
 */
export const DISTRIBUTIONS_TABLE = registerOperationTable({
  table: 'distributions',
  statusType: 'DistributionStatus',
  outcomes: { refused: 'REJECTED', not_sent: 'removed', lost: 'UNKNOWN', unexpected: 'UNKNOWN' },
  recovery: { [DISTRIBUTION_RESOURCE]: ['distributions.init', 'distributions.fiat'] },
  resolution: {
    outcomes: MANUAL_DISTRIBUTION_OUTCOMES,
    resolvable: ['UNKNOWN'],
    audit: { action: 'distribution.resolved', resourceType: 'distribution' },
    auditDetails: ['kind'],
    notResolvable: { code: 'distribution_not_resolvable', noun: 'distribution' },
  },
  attention: {
    row: defineRow({
      id: column.uuid.from('id'),
      kind: column.text.from(asText('kind')),
      amount: column.text.from(trimmedAmount('amount')),
      currency: column.text.from(asText('currency')),
      failureReason: column.text.orNull.from('failure_reason'),
      createdAt: column.timestamptz.from('created_at'),
    }),
    queues: [{ name: 'unknown', where: `status = 'UNKNOWN'` }],
  },
});
