/** Domain shapes of the virtual cards area; Prisma's types stay inside the repository. */

/** What this API shows of a card's state (the provider says 'active', 'disabled', 'terminated'). */
export const CARD_STATUSES = ['ACTIVE', 'FROZEN', 'TERMINATED'] as const;
export type CardStatus = (typeof CARD_STATUSES)[number];

/** Provider card status → ours; anything else is not understood and changes nothing. */
export const PROVIDER_CARD_STATUS: Readonly<Record<string, CardStatus>> = {
  active: 'ACTIVE',
  enabled: 'ACTIVE',
  disabled: 'FROZEN',
  frozen: 'FROZEN',
  terminated: 'TERMINATED',
};

/**
 * Everything asked of the provider about a card (creation included) is one of these. SYNC re-reads
 * the card (POST /v1/cards/{id}/sync): its `amount` is the balance change it found, its `newBalance`
 * the balance the provider said.
 */
export const CARD_OPERATION_KINDS = ['CREATE', 'TOPUP', 'WITHDRAW', 'FREEZE', 'UNFREEZE', 'TERMINATE', 'TRANSACTIONS', 'SYNC'] as const;
export type CardOperationKind = (typeof CARD_OPERATION_KINDS)[number];

/**
 * PENDING: stored, the provider call is under way (or the process died during it).
 * SUCCEEDED / FAILED: the provider's answer (or a proof the call never left) decided it.
 * UNKNOWN: the answer was lost (timeout, 5xx, broken connection): the provider may have acted.
 */
export const CARD_OPERATION_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED', 'UNKNOWN'] as const;
export type CardOperationStatus = (typeof CARD_OPERATION_STATUSES)[number];

/** What a person may decide an UNKNOWN card operation was, after checking with the provider: it happened, or it did not. */
export const MANUAL_CARD_OPERATION_OUTCOMES = ['SUCCEEDED', 'FAILED'] as const satisfies readonly CardOperationStatus[];
export type ManualCardOperationOutcome = (typeof MANUAL_CARD_OPERATION_OUTCOMES)[number];

/** The KYC data of a card user as the provider holds it (the id number aside). */
interface CardUserDetails {
  ownerId: string;
  providerUserId: string;
  providerReference: string;
  firstName: string;
  lastName: string;
  email: string;
  countryCode: string;
  contact: string;
  dob: string;
  isBusiness: boolean;
  billingAddress: string;
  billingCity: string;
  billingCountry: string;
  businessName: string | null;
  billingState: string;
  billingPostalCode: string;
}

export interface CardUserRecord extends CardUserDetails {
  id: string;
  providerCardIds: string[];
  lastSyncedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewCardUser extends CardUserDetails {
  /** Already sealed with the data encryption key: the clear id number is never stored. */
  idNumberEncrypted: string;
}

/** What the provider's GET card user told us. */
export interface CardUserRefresh {
  firstName?: string;
  lastName?: string;
  email?: string;
  /** Absent when the provider's answer had no `cards` list: the stored list is kept. */
  providerCardIds?: string[];
}

/** A card as stored: never its full number nor its CVV. */
export interface CardRecord {
  id: string;
  cardUserId: string;
  ownerId: string;
  providerCardId: string;
  last4: string;
  expiry: string;
  currency: string;
  status: CardStatus;
  /** Plain decimal string as stored ("1500", "12.5"), null when never known. */
  lastKnownBalance: string | null;
  balanceSyncedAt: Date | null;
  terminatedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A card the provider created, with the balance it was created with. */
export type NewCard = Pick<CardRecord, 'cardUserId' | 'ownerId' | 'providerCardId' | 'last4' | 'expiry' | 'currency' | 'status'> & {
  balance: string;
};

/** What the provider's GET card told us (already checked and normalised). */
export interface CardRefresh {
  status?: CardStatus;
  balance?: string;
  expiry?: string;
}

export interface CardOperationRecord {
  id: string;
  cardUserId: string;
  cardId: string | null;
  /** The owner of the card user (for access checks), not necessarily who asked. */
  ownerId: string;
  requestedBy: string;
  kind: CardOperationKind;
  amount: string | null;
  currency: string | null;
  status: CardOperationStatus;
  providerTransactionId: string | null;
  newBalance: string | null;
  providerResponse: unknown;
  failureReason: string | null;
  createdAt: Date;
  completedAt: Date | null;
}

export interface NewCardOperation {
  cardUserId: string;
  cardId: string | null;
  requestedBy: string;
  kind: CardOperationKind;
  amount?: string;
  currency?: string;
}

/** How an operation ended; stored with the provider's (redacted) answer. */
export type OperationOutcome =
  | { status: 'SUCCEEDED'; providerResponse: unknown; providerTransactionId?: string | null; newBalance?: string | null }
  | { status: 'FAILED'; failureReason: string; providerResponse?: unknown }
  | { status: 'UNKNOWN'; failureReason: string; providerResponse?: unknown };

export interface CardUserFilter {
  ownerId?: string;
}

export interface CardFilter {
  ownerId?: string;
  cardUserId?: string;
  status?: CardStatus;
}

export interface CardOperationFilter {
  cardUserId?: string;
  cardId?: string;
  kind?: CardOperationKind;
  status?: CardOperationStatus;
}
