import type {
  CardOperationKind as DbCardOperationKind,
  CardOperationStatus as DbCardOperationStatus,
  CardStatus as DbCardStatus,
} from '../generated/prisma/enums';
import type { Proven, SameValues } from '../database/same-values';
import { column, type RowOf } from '../database/sql-statement';
import {
  CARD_OPERATION_KINDS,
  CARD_OPERATION_STATUSES,
  CARD_STATUSES,
  type CardOperationKind,
  type CardOperationRecord,
  type CardOperationStatus,
  type CardRecord,
  type CardStatus,
  type CardUserRecord,
  type OperationOutcome,
} from './card.types';

// The rows of the cards tables, as the written-out statements declare them, and their mapping to
// the area's records: the repository's side of the boundary. Amounts come back as text without the
// trailing zeros of numeric(24,4) (trim_scale), varchar columns as text.

/** The unions of card.types.ts are the database enums, value for value (the statements' enum columns check the labels too). */
export type CardEnumsMatch = [
  Proven<SameValues<CardStatus, DbCardStatus>>,
  Proven<SameValues<CardOperationKind, DbCardOperationKind>>,
  Proven<SameValues<CardOperationStatus, DbCardOperationStatus>>,
];

export const CARD_USER_COLUMNS = {
  id: column.uuid,
  ownerId: column.text,
  providerUserId: column.text,
  providerReference: column.text,
  firstName: column.text,
  lastName: column.text,
  email: column.text,
  countryCode: column.text,
  contact: column.text,
  dob: column.text,
  isBusiness: column.bool,
  billingAddress: column.text,
  billingCity: column.text,
  billingCountry: column.text,
  businessName: column.text.orNull,
  billingState: column.text,
  billingPostalCode: column.text,
  providerCardIds: column.textArray,
  lastSyncedAt: column.timestamptz.orNull,
  createdAt: column.timestamptz,
  updatedAt: column.timestamptz,
};
/** A card user (never its sealed id number), from alias `a`. */
export const cardUserSelect = (a: string) => `${a}.id, ${a}.owner_id AS "ownerId", ${a}.provider_user_id AS "providerUserId",
  ${a}.provider_reference AS "providerReference", ${a}.first_name AS "firstName", ${a}.last_name AS "lastName", ${a}.email,
  ${a}.country_code::text AS "countryCode", ${a}.contact, ${a}.dob::text AS dob, ${a}.is_business AS "isBusiness",
  ${a}.billing_address AS "billingAddress", ${a}.billing_city AS "billingCity", ${a}.billing_country AS "billingCountry",
  ${a}.business_name AS "businessName", ${a}.billing_state AS "billingState", ${a}.billing_postal_code AS "billingPostalCode",
  COALESCE(${a}.provider_card_ids, '{}') AS "providerCardIds", ${a}.last_synced_at AS "lastSyncedAt", ${a}.created_at AS "createdAt",
  ${a}.updated_at AS "updatedAt"`;

export const CARD_COLUMNS = {
  id: column.uuid,
  cardUserId: column.uuid,
  ownerId: column.text,
  providerCardId: column.text,
  last4: column.text,
  expiry: column.text,
  currency: column.text,
  status: column.enum('CardStatus', CARD_STATUSES),
  lastKnownBalance: column.text.orNull,
  balanceSyncedAt: column.timestamptz.orNull,
  terminatedAt: column.timestamptz.orNull,
  createdAt: column.timestamptz,
  updatedAt: column.timestamptz,
};
/** A card, from alias `a`. */
export const cardSelect = (a: string) => `${a}.id, ${a}.card_user_id AS "cardUserId", ${a}.owner_id AS "ownerId",
  ${a}.provider_card_id AS "providerCardId", ${a}.last4::text AS last4, ${a}.expiry, ${a}.currency::text AS currency, ${a}.status,
  trim_scale(${a}.last_known_balance)::text AS "lastKnownBalance", ${a}.balance_synced_at AS "balanceSyncedAt",
  ${a}.terminated_at AS "terminatedAt", ${a}.created_at AS "createdAt", ${a}.updated_at AS "updatedAt"`;

/** A card beside an operation in one row (its columns named `card.…`), from alias `a`. */
export const CARD_PART_COLUMNS = {
  'card.id': column.uuid,
  'card.cardUserId': column.uuid,
  'card.ownerId': column.text,
  'card.providerCardId': column.text,
  'card.last4': column.text,
  'card.expiry': column.text,
  'card.currency': column.text,
  'card.status': column.enum('CardStatus', CARD_STATUSES),
  'card.lastKnownBalance': column.text.orNull,
  'card.balanceSyncedAt': column.timestamptz.orNull,
  'card.terminatedAt': column.timestamptz.orNull,
  'card.createdAt': column.timestamptz,
  'card.updatedAt': column.timestamptz,
};
export const cardPartSelect = (a: string) => `${a}.id AS "card.id", ${a}.card_user_id AS "card.cardUserId", ${a}.owner_id AS "card.ownerId",
  ${a}.provider_card_id AS "card.providerCardId", ${a}.last4::text AS "card.last4", ${a}.expiry AS "card.expiry",
  ${a}.currency::text AS "card.currency", ${a}.status AS "card.status",
  trim_scale(${a}.last_known_balance)::text AS "card.lastKnownBalance", ${a}.balance_synced_at AS "card.balanceSyncedAt",
  ${a}.terminated_at AS "card.terminatedAt", ${a}.created_at AS "card.createdAt", ${a}.updated_at AS "card.updatedAt"`;

export const OPERATION_COLUMNS = {
  id: column.uuid,
  cardUserId: column.uuid,
  cardId: column.uuid.orNull,
  ownerId: column.text,
  requestedBy: column.text,
  kind: column.enum('CardOperationKind', CARD_OPERATION_KINDS),
  amount: column.text.orNull,
  currency: column.text.orNull,
  status: column.enum('CardOperationStatus', CARD_OPERATION_STATUSES),
  providerTransactionId: column.text.orNull,
  newBalance: column.text.orNull,
  providerResponse: column.jsonb.orNull,
  failureReason: column.text.orNull,
  createdAt: column.timestamptz,
  completedAt: column.timestamptz.orNull,
};
/** An operation from alias `a`, with the owner of its card user from alias `u` (joined by the statement). */
export const operationSelect = (a: string, u: string) => `${a}.id, ${a}.card_user_id AS "cardUserId", ${a}.card_id AS "cardId",
  ${u}.owner_id AS "ownerId", ${a}.requested_by AS "requestedBy", ${a}.kind, trim_scale(${a}.amount)::text AS amount,
  ${a}.currency::text AS currency, ${a}.status, ${a}.provider_transaction_id AS "providerTransactionId",
  trim_scale(${a}.new_balance)::text AS "newBalance", ${a}.provider_response AS "providerResponse",
  ${a}.failure_reason AS "failureReason", ${a}.created_at AS "createdAt", ${a}.completed_at AS "completedAt"`;

export const OPERATION_AND_CARD_COLUMNS = { ...OPERATION_COLUMNS, ...CARD_PART_COLUMNS };

/**
 * The SET of an operation's outcome, its values from `$n` on (outcomeValues): status, then what the
 * outcome says; what it does not say is left as stored.
 */
export const outcomeSet = (n: number) => `status = $${n}::"CardOperationStatus", completed_at = now(),
    failure_reason = COALESCE($${n + 1}::text, failure_reason), provider_response = COALESCE($${n + 2}::jsonb, provider_response),
    provider_transaction_id = COALESCE($${n + 3}::text, provider_transaction_id),
    new_balance = COALESCE($${n + 4}::numeric, new_balance)`;

export function outcomeValues(outcome: OperationOutcome): unknown[] {
  const response = outcome.providerResponse === undefined ? null : JSON.stringify(outcome.providerResponse ?? null);
  if (outcome.status === 'SUCCEEDED') {
    return ['SUCCEEDED', null, response, outcome.providerTransactionId ?? null, outcome.newBalance ?? null];
  }
  return [outcome.status, outcome.failureReason.slice(0, 1000), response, null, null];
}

/**
 * The SET of a change to a card, its values `$s` (status), `$b` (balance), `$e` (expiry), each NULL
 * to leave it as stored. Termination is final: nothing brings a terminated card back, and the
 * first termination is dated. The card's alias is `c`.
 */
export const cardChangeSet = (s: number, b: number, e: number) => `
    status = CASE WHEN c.status = 'TERMINATED' OR $${s}::"CardStatus" IS NULL THEN c.status ELSE $${s}::"CardStatus" END,
    terminated_at = CASE WHEN c.status <> 'TERMINATED' AND $${s}::"CardStatus" = 'TERMINATED' THEN now() ELSE c.terminated_at END,
    expiry = COALESCE($${e}::text, c.expiry),
    last_known_balance = COALESCE($${b}::numeric, c.last_known_balance),
    balance_synced_at = CASE WHEN $${b}::numeric IS NULL THEN c.balance_synced_at ELSE now() END,
    updated_at = now()`;

export function toCardUser(row: RowOf<typeof CARD_USER_COLUMNS>): CardUserRecord {
  return row;
}

export function toCard(row: RowOf<typeof CARD_COLUMNS>): CardRecord {
  return row;
}

export function toOperation(row: RowOf<typeof OPERATION_COLUMNS>): CardOperationRecord {
  return {
    id: row.id,
    cardUserId: row.cardUserId,
    cardId: row.cardId,
    ownerId: row.ownerId,
    requestedBy: row.requestedBy,
    kind: row.kind,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    providerTransactionId: row.providerTransactionId,
    newBalance: row.newBalance,
    providerResponse: row.providerResponse,
    failureReason: row.failureReason,
    createdAt: row.createdAt,
    completedAt: row.completedAt,
  };
}

/** The operation and the card of a row of OPERATION_AND_CARD_COLUMNS. */
export function toOperationAndCard(row: RowOf<typeof OPERATION_AND_CARD_COLUMNS>): { card: CardRecord; operation: CardOperationRecord } {
  return {
    operation: toOperation(row),
    card: {
      id: row['card.id'],
      cardUserId: row['card.cardUserId'],
      ownerId: row['card.ownerId'],
      providerCardId: row['card.providerCardId'],
      last4: row['card.last4'],
      expiry: row['card.expiry'],
      currency: row['card.currency'],
      status: row['card.status'],
      lastKnownBalance: row['card.lastKnownBalance'],
      balanceSyncedAt: row['card.balanceSyncedAt'],
      terminatedAt: row['card.terminatedAt'],
      createdAt: row['card.createdAt'],
      updatedAt: row['card.updatedAt'],
    },
  };
}
