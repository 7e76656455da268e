import type {
  CardOperationKind as DbCardOperationKind,
  CardOperationStatus as DbCardOperationStatus,
  CardStatus as DbCardStatus,
} from '../generated/prisma/enums';
import type { Proven, SameValues } from '../database/same-values';
import { asText, defineRow, trimmedAmount } from '../database/row-declaration';
import { column } from '../database/sql-statement';
import {
  CARD_OPERATION_KINDS,
  CARD_OPERATION_STATUSES,
  CARD_STATUSES,
  type CardOperationKind,
  type CardOperationStatus,
  type CardStatus,
  type OperationOutcome,
} from './card.types';

// The rows of the cards tables, one declaration each (defineRow: select list, columns and mapper),
// and the fragments the statements of card users, cards and card operations share. Amounts come
// back as text without the trailing zeros of numeric(24,4) (trim_scale), char(n) columns as text.

/** The unions of card.types.ts are the database enums, value for value (the statements' enum columns check the labels too). */
export type CardEnumsMatch = [
  Proven<SameValues<CardStatus, DbCardStatus>>,
  Proven<SameValues<CardOperationKind, DbCardOperationKind>>,
  Proven<SameValues<CardOperationStatus, DbCardOperationStatus>>,
];

/** A card user, never its sealed id number (CardUserRecord). */
export const CARD_USER_ROW = defineRow({
  id: column.uuid.from('id'),
  ownerId: column.text.from('owner_id'),
  providerUserId: column.text.from('provider_user_id'),
  providerReference: column.text.from('provider_reference'),
  firstName: column.text.from('first_name'),
  lastName: column.text.from('last_name'),
  email: column.text.from('email'),
  countryCode: column.text.from(asText('country_code')),
  contact: column.text.from('contact'),
  dob: column.text.from(asText('dob')),
  isBusiness: column.bool.from('is_business'),
  billingAddress: column.text.from('billing_address'),
  billingCity: column.text.from('billing_city'),
  billingCountry: column.text.from('billing_country'),
  businessName: column.text.orNull.from('business_name'),
  billingState: column.text.from('billing_state'),
  billingPostalCode: column.text.from('billing_postal_code'),
  providerCardIds: column.textArray.from((a) => `COALESCE(${a}.provider_card_ids, '{}')`),
  lastSyncedAt: column.timestamptz.orNull.from('last_synced_at'),
  createdAt: column.timestamptz.from('created_at'),
  updatedAt: column.timestamptz.from('updated_at'),
});

/** A card (CardRecord). */
export const CARD_ROW = defineRow({
  id: column.uuid.from('id'),
  cardUserId: column.uuid.from('card_user_id'),
  ownerId: column.text.from('owner_id'),
  providerCardId: column.text.from('provider_card_id'),
  last4: column.text.from(asText('last4')),
  expiry: column.text.from('expiry'),
  currency: column.text.from(asText('currency')),
  status: column.enum('CardStatus', CARD_STATUSES).from('status'),
  lastKnownBalance: column.text.orNull.from(trimmedAmount('last_known_balance')),
  balanceSyncedAt: column.timestamptz.orNull.from('balance_synced_at'),
  terminatedAt: column.timestamptz.orNull.from('terminated_at'),
  createdAt: column.timestamptz.from('created_at'),
  updatedAt: column.timestamptz.from('updated_at'),
});

/** A card operation (CardOperationRecord), with the owner of its card user: the statement joins card_users as `u`. */
export const OPERATION_ROW = defineRow({
  id: column.uuid.from('id'),
  cardUserId: column.uuid.from('card_user_id'),
  cardId: column.uuid.orNull.from('card_id'),
  ownerId: column.text.from(() => 'u.owner_id'),
  requestedBy: column.text.from('requested_by'),
  kind: column.enum('CardOperationKind', CARD_OPERATION_KINDS).from('kind'),
  amount: column.text.orNull.from(trimmedAmount('amount')),
  currency: column.text.orNull.from(asText('currency')),
  status: column.enum('CardOperationStatus', CARD_OPERATION_STATUSES).from('status'),
  providerTransactionId: column.text.orNull.from('provider_transaction_id'),
  newBalance: column.text.orNull.from(trimmedAmount('new_balance')),
  providerResponse: column.jsonb.orNull.from('provider_response'),
  failureReason: column.text.orNull.from('failure_reason'),
  createdAt: column.timestamptz.from('created_at'),
  completedAt: column.timestamptz.orNull.from('completed_at'),
});

/** An operation and its card in one row (a completion that changed the card): `operation.…` and `card.…` columns. */
export const OPERATION_PART = OPERATION_ROW.part('operation');
export const CARD_PART = CARD_ROW.part('card');
export const OPERATION_AND_CARD_COLUMNS = { ...OPERATION_PART.columns, ...CARD_PART.columns };
/** The select list of OPERATION_AND_CARD_COLUMNS: the operation from `o` (card user `u`), the card from `card`. */
export const operationAndCardSelect = `${OPERATION_PART.select('o')},\n    ${CARD_PART.select('card')}`;

/** The named parameters of an operation's outcome (outcomeSet, outcomeValues). */
export const OUTCOME_PARAMETERS = {
  outcomeStatus: column.enum('CardOperationStatus', CARD_OPERATION_STATUSES),
  failureReason: column.text.orNull,
  providerResponse: column.jsonb.orNull,
  providerTransactionId: column.text.orNull,
  newBalance: column.numeric.orNull,
};
type Placeholders<D> = Readonly<Record<keyof D, string>>;

/** The SET of an operation's outcome: its status, then what the outcome says; what it does not say is left as stored. */
export const outcomeSet = (p: Placeholders<typeof OUTCOME_PARAMETERS>) => `status = ${p.outcomeStatus}, completed_at = now(),
    failure_reason = COALESCE(${p.failureReason}, failure_reason), provider_response = COALESCE(${p.providerResponse}, provider_response),
    provider_transaction_id = COALESCE(${p.providerTransactionId}, provider_transaction_id),
    new_balance = COALESCE(${p.newBalance}, new_balance)`;

export function outcomeValues(outcome: OperationOutcome) {
  const providerResponse = outcome.providerResponse === undefined ? null : JSON.stringify(outcome.providerResponse ?? null);
  if (outcome.status === 'SUCCEEDED') {
    return {
      outcomeStatus: outcome.status,
      failureReason: null,
      providerResponse,
      providerTransactionId: outcome.providerTransactionId ?? null,
      newBalance: outcome.newBalance ?? null,
    };
  }
  const failureReason = outcome.failureReason.slice(0, 1000);
  return { outcomeStatus: outcome.status, failureReason, providerResponse, providerTransactionId: null, newBalance: null };
}

/** The named parameters of a change to a card (cardChangeSet), each NULL to leave it as stored. */
export const CARD_CHANGE_PARAMETERS = {
  cardStatus: column.enum('CardStatus', CARD_STATUSES).orNull,
  balance: column.numeric.orNull,
  expiry: column.text.orNull,
};

/**
 * The SET of a change to a card (CARD_CHANGE_PARAMETERS). Termination is final: nothing brings a
 * terminated card back, and the first termination is dated. The card's alias is `c`.
 */
export const cardChangeSet = (p: Placeholders<typeof CARD_CHANGE_PARAMETERS>) => `
    status = CASE WHEN c.status = 'TERMINATED' OR ${p.cardStatus} IS NULL THEN c.status ELSE ${p.cardStatus} END,
    terminated_at = CASE WHEN c.status <> 'TERMINATED' AND ${p.cardStatus} = 'TERMINATED' THEN now() ELSE c.terminated_at END,
    expiry = COALESCE(${p.expiry}, c.expiry),
    last_known_balance = COALESCE(${p.balance}, c.last_known_balance),
    balance_synced_at = CASE WHEN ${p.balance} IS NULL THEN c.balance_synced_at ELSE now() END,
    updated_at = now()`;
