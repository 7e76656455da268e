import { arrayOf, namedParameters } from '../database/named-parameters';
import { asText, defineRow, trimmedAmount } from '../database/row-declaration';
import { column } from '../database/sql-statement';
import { DISTRIBUTION_KINDS, DISTRIBUTION_STATUSES, type NewDistribution } from './distribution.types';

// The row of a distribution with its shares, one declaration (defineRow: select list, columns and
// mapper), and the parameters of a new one.

/** One share as the statements build it: minor units as text (a bigint), the rate without trailing zeros. */
interface ShareJson {
  position: number;
  matricule: string;
  rate: string;
  shareMinor: string;
}

const shareJson = (s: string) =>
  `json_build_object('position', ${s}.position, 'matricule', ${s}.matricule, 'rate', trim_scale(${s}.rate)::text, 'shareMinor', ${s}.share_minor::text)`;

/** A distribution (DistributionRecord), its shares read from `shares` (the table, or the CTE that just stored them), in order. */
const distributionFields = (shares: string) => ({
  id: column.uuid.from('id'),
  kind: column.enum('DistributionKind', DISTRIBUTION_KINDS).from('kind'),
  createdBy: column.text.from('created_by'),
  paymentReceiver: column.text.orNull.from('payment_receiver'),
  paymentId: column.text.orNull.from('payment_id'),
  payer: column.text.orNull.from('payer'),
  amount: column.text.from(trimmedAmount('amount')),
  currency: column.text.from(asText('currency')),
  status: column.enum('DistributionStatus', DISTRIBUTION_STATUSES).from('status'),
  providerMessage: column.text.orNull.from('provider_message'),
  failureReason: column.text.orNull.from('failure_reason'),
  providerRequest: column.jsonb.orNull.from('provider_request'),
  providerResponse: column.jsonb.orNull.from('provider_response'),
  receiverShareMinor: column.int8.orNull.from('receiver_share_minor').as(BigInt),
  createdAt: column.timestamptz.from('created_at'),
  completedAt: column.timestamptz.orNull.from('completed_at'),
  shares: column
    .builtJson<ShareJson[]>()
    .from(
      (d) =>
        `(SELECT COALESCE(json_agg(${shareJson('s')} ORDER BY s.position), '[]'::json) FROM ${shares} s WHERE s.distribution_id = ${d}.id)`,
    )
    .as((json) => json.map((share) => ({ ...share, shareMinor: BigInt(share.shareMinor) }))),
});

export const DISTRIBUTION_ROW = defineRow(distributionFields('distribution_shares'));
/** The distribution CREATE_PENDING stored: its shares from its `shares` CTE (the table does not show them to the same statement). */
export const STORED_DISTRIBUTION_ROW = defineRow(distributionFields('shares'));

/** A new distribution and its shares (arrays, in order), after OPERATION_LINK's $1 (the new id) to $10. */
export const NEW_DISTRIBUTION = namedParameters(
  {
    kind: column.enum('DistributionKind', DISTRIBUTION_KINDS),
    createdBy: column.text,
    paymentReceiver: column.text.orNull,
    paymentId: column.text.orNull,
    payer: column.text.orNull,
    amount: column.numeric,
    currency: column.text,
    receiverShareMinor: column.int8.orNull,
    providerRequest: column.jsonb,
    positions: arrayOf(column.int4),
    matricules: arrayOf(column.text),
    rates: arrayOf(column.numeric),
    shareMinors: arrayOf(column.int8),
  },
  11,
);

export function newDistributionValues(distribution: NewDistribution) {
  return {
    ...distribution,
    receiverShareMinor: distribution.receiverShareMinor === null ? null : distribution.receiverShareMinor.toString(),
    providerRequest: JSON.stringify(distribution.providerRequest ?? null),
    positions: distribution.shares.map((share) => share.position),
    matricules: distribution.shares.map((share) => share.matricule),
    rates: distribution.shares.map((share) => share.rate),
    shareMinors: distribution.shares.map((share) => share.shareMinor.toString()),
  };
}
