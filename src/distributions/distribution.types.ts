/** Domain shapes of the distributions area; Prisma's types stay inside the repository. */

export const DISTRIBUTION_KINDS = ['init', 'fiat'] as const;
export type DistributionKind = (typeof DISTRIBUTION_KINDS)[number];

/**
 * PENDING: stored with its shares, not yet answered by the provider.
 * ACCEPTED: the provider answered `success: true`.
 * REJECTED: the provider refused it (its message in `failureReason`); nothing happened there.
 * UNKNOWN: the answer was lost (timeout, 5xx, broken connection, unreadable answer): the
 * redistribution may or may not have happened; it is never resent automatically.
 */
export const DISTRIBUTION_STATUSES = ['PENDING', 'ACCEPTED', 'REJECTED', 'UNKNOWN'] as const;
export type DistributionStatus = (typeof DISTRIBUTION_STATUSES)[number];

/** What a person may decide an UNKNOWN distribution was, after checking with the provider: it happened, or it did not. */
export const MANUAL_DISTRIBUTION_OUTCOMES = ['ACCEPTED', 'REJECTED'] as const satisfies readonly DistributionStatus[];
export type ManualDistributionOutcome = (typeof MANUAL_DISTRIBUTION_OUTCOMES)[number];

export interface ShareRecord {
  position: number;
  matricule: string;
  /** Canonical decimal percentage, e.g. "33.33". */
  rate: string;
  /** The beneficiary's share in the currency's minor units. */
  shareMinor: bigint;
}

export interface DistributionRecord {
  id: string;
  kind: DistributionKind;
  createdBy: string;
  paymentReceiver: string | null;
  paymentId: string | null;
  payer: string | null;
  /** Plain decimal string as stored, e.g. "10000" or "12.5". */
  amount: string;
  currency: string;
  status: DistributionStatus;
  providerMessage: string | null;
  failureReason: string | null;
  providerRequest: unknown;
  providerResponse: unknown;
  receiverShareMinor: bigint | null;
  createdAt: Date;
  completedAt: Date | null;
  shares: ShareRecord[];
}

/** A distribution checked and computed, before it is stored PENDING. */
export type NewDistribution = Pick<
  DistributionRecord,
  | 'kind'
  | 'createdBy'
  | 'paymentReceiver'
  | 'paymentId'
  | 'payer'
  | 'amount'
  | 'currency'
  | 'receiverShareMinor'
  | 'providerRequest'
  | 'shares'
>;

/** What the provider's answer did to the distribution. */
export type DistributionOutcome =
  | { status: 'ACCEPTED'; providerMessage: string | null; providerResponse: unknown }
  | { status: 'REJECTED'; failureReason: string; providerMessage: string | null; providerResponse: unknown }
  | { status: 'UNKNOWN'; failureReason: string; providerMessage: string | null; providerResponse: unknown };

export interface DistributionFilter {
  kind?: DistributionKind;
  status?: DistributionStatus;
  from?: Date;
  to?: Date;
}
