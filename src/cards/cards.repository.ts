import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { NewAuditEvent } from '../audit/audit.types';
import { keysetListStatements, type ListFilter } from '../database/list-queries';
import { PrismaService } from '../database/prisma.service';
import { column, sqlStatement } from '../database/sql-statement';
import { isUniqueViolation } from '../database/unique-violation';
import {
  LINK_HELD,
  linkedInsertValues,
  OPERATION_LINK,
  registerOperationTable,
  storedRow,
  type OperationLink,
} from '../provider-operations/operation-tables';
import { resolveProviderOperation, type ManualDecision } from '../provider-operations/resolve-provider-operation';
import {
  MANUAL_CARD_OPERATION_OUTCOMES,
  type ManualCardOperationOutcome,
  type CardFilter,
  type CardOperationFilter,
  type CardOperationRecord,
  type CardRecord,
  type CardRefresh,
  type CardStatus,
  type CardUserFilter,
  type CardUserRecord,
  type CardUserRefresh,
  type NewCard,
  type NewCardOperation,
  type NewCardUser,
  type OperationOutcome,
} from './card.types';
import {
  CARD_COLUMNS,
  CARD_USER_COLUMNS,
  cardChangeSet,
  cardPartSelect,
  cardSelect,
  cardUserSelect,
  OPERATION_AND_CARD_COLUMNS,
  OPERATION_COLUMNS,
  operationSelect,
  outcomeSet,
  outcomeValues,
  toCard,
  toCardUser,
  toOperation,
  toOperationAndCard,
} from './cards.rows';

/** The SQL of CardsRepository, written out (listed in src/queries/cards.repository.sql). */
const repository = 'cards.repository';

/** Card operations follow the provider-operation lifecycle: swept when interrupted, decided by a person when UNKNOWN. */
export const CARD_OPERATIONS_TABLE = registerOperationTable({
  table: 'card_operations',
  statusType: 'CardOperationStatus',
  manualOutcomes: MANUAL_CARD_OPERATION_OUTCOMES,
  resolutionAudit: { action: 'card_operation.resolved', resourceType: 'card_operation' },
});

// ------------------------------------------------------------------ card users

const CARD_USER_INSERT = sqlStatement(
  repository,
  'createCardUser',
  'card_users_insert',
  `
  INSERT INTO card_users AS u (id, owner_id, provider_user_id, provider_reference, first_name, last_name, email, country_code, contact,
    dob, is_business, billing_address, billing_city, billing_country, id_number_encrypted, business_name, billing_state,
    billing_postal_code, provider_card_ids, created_at, updated_at)
  VALUES (gen_random_uuid(), $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::boolean,
    $11::text, $12::text, $13::text, $14::text, $15::text, $16::text, $17::text, '{}', now(), now())
  RETURNING ${cardUserSelect('u')}`,
  CARD_USER_COLUMNS,
);

const CARD_USER_FIND = sqlStatement(
  repository,
  'findCardUser',
  'card_users_find',
  `
  SELECT ${cardUserSelect('u')} FROM card_users u WHERE u.id = $1::uuid`,
  CARD_USER_COLUMNS,
);

/** What the provider said of a user, merged in: a NULL leaves the stored value. */
const CARD_USER_REFRESH = sqlStatement(
  repository,
  'refreshCardUser',
  'card_users_refresh',
  `
  UPDATE card_users AS u
  SET first_name = COALESCE($2::text, u.first_name), last_name = COALESCE($3::text, u.last_name), email = COALESCE($4::text, u.email),
    provider_card_ids = COALESCE($5::text[], u.provider_card_ids), last_synced_at = now(), updated_at = now()
  WHERE u.id = $1::uuid
  RETURNING ${cardUserSelect('u')}`,
  CARD_USER_COLUMNS,
);

export const CARD_USER_FILTERS: readonly ListFilter<CardUserFilter>[] = [['ownerId', 'owner', (n) => `u.owner_id = $${n}::text`]];
export const CARD_USER_LIST = keysetListStatements({
  repository,
  usedBy: 'listCardUsers',
  prefix: 'card_users_page',
  from: 'card_users u',
  time: 'u.created_at',
  select: cardUserSelect('u'),
  columns: CARD_USER_COLUMNS,
  filters: CARD_USER_FILTERS,
});

// ------------------------------------------------------------------ cards

const CARD_FIND = sqlStatement(
  repository,
  'findCard',
  'cards_find',
  `
  SELECT ${cardSelect('c')} FROM cards c WHERE c.id = $1::uuid`,
  CARD_COLUMNS,
);

export const CARDS_OF_USER = sqlStatement(
  repository,
  'cardsOfUser',
  'cards_of_user',
  `
  SELECT ${cardSelect('c')} FROM cards c WHERE c.card_user_id = $1::uuid ORDER BY c.created_at, c.id`,
  CARD_COLUMNS,
);

export const CARD_FILTERS: readonly ListFilter<CardFilter>[] = [
  ['ownerId', 'owner', (n) => `c.owner_id = $${n}::text`],
  ['cardUserId', 'user', (n) => `c.card_user_id = $${n}::uuid`],
  ['status', 'status', (n) => `c.status = $${n}::"CardStatus"`],
];
export const CARD_LIST = keysetListStatements({
  repository,
  usedBy: 'listCards',
  prefix: 'cards_page',
  from: 'cards c',
  time: 'c.created_at',
  select: cardSelect('c'),
  columns: CARD_COLUMNS,
  filters: CARD_FILTERS,
});

/** What the provider's card details said ($2 status, $3 balance, $4 expiry; NULL: unchanged). */
const CARD_REFRESH = sqlStatement(
  repository,
  'refreshCard',
  'cards_refresh',
  `
  UPDATE cards AS c SET ${cardChangeSet(2, 3, 4)}
  WHERE c.id = $1::uuid
  RETURNING ${cardSelect('c')}`,
  CARD_COLUMNS,
);

/** Holds the card's row until the transaction ends, so that what is read of it next stays true. */
const CARD_LOCK = sqlStatement(
  repository,
  'completeSync',
  'cards_lock',
  `
  SELECT c.id FROM cards c WHERE c.id = $1::uuid FOR UPDATE`,
  { id: column.uuid },
);

// ------------------------------------------------------------------ operations

/** A card operation ($1, $11 on) stored PENDING, linked to the request's idempotency record in the same statement ($2 to $10). */
const OPERATION_START = sqlStatement(
  repository,
  'startOperation',
  'card_operations_start',
  `
  WITH ${OPERATION_LINK}, o AS (
    INSERT INTO card_operations (id, card_user_id, card_id, requested_by, kind, amount, currency, status, created_at)
    SELECT $1::uuid, $11::uuid, $12::uuid, $13::text, $14::"CardOperationKind", $15::numeric, $16::text, 'PENDING', now()
    WHERE ${LINK_HELD}
    RETURNING *
  )
  SELECT ${operationSelect('o', 'u')} FROM o JOIN card_users u ON u.id = o.card_user_id`,
  OPERATION_COLUMNS,
);

const OPERATION_COMPLETE = sqlStatement(
  repository,
  'completeOperation',
  'card_operations_complete',
  `
  WITH o AS (
    UPDATE card_operations SET ${outcomeSet(2)} WHERE id = $1::uuid RETURNING *
  )
  SELECT ${operationSelect('o', 'u')} FROM o JOIN card_users u ON u.id = o.card_user_id`,
  OPERATION_COLUMNS,
);

/**
 * A card creation the provider accepted, in one statement: the card (last four digits only, $2 on),
 * its provider id added to its user's list (once), and the operation completed ($10 on) and linked to the card.
 */
const CARD_CREATION_COMPLETE = sqlStatement(
  repository,
  'completeCardCreation',
  'cards_creation_complete',
  `
  WITH card AS (
    INSERT INTO cards (id, card_user_id, owner_id, provider_card_id, last4, expiry, currency, status, last_known_balance,
      balance_synced_at, created_at, updated_at)
    VALUES (gen_random_uuid(), $2::uuid, $3::text, $4::text, $5::text, $6::text, $7::text, $8::"CardStatus", $9::numeric, now(), now(), now())
    RETURNING *
  ), user_cards AS (
    UPDATE card_users SET provider_card_ids = array_append(provider_card_ids, $4::text), updated_at = now()
    WHERE id = $2::uuid AND NOT ($4::text = ANY (provider_card_ids))
  ), o AS (
    UPDATE card_operations SET ${outcomeSet(10)}, card_id = (SELECT id FROM card) WHERE id = $1::uuid RETURNING *
  )
  SELECT ${operationSelect('o', 'u')}, ${cardPartSelect('card')}
  FROM o JOIN card_users u ON u.id = o.card_user_id CROSS JOIN card`,
  OPERATION_AND_CARD_COLUMNS,
);

/** A successful operation ($1, outcome $6 on) and what it did to its card ($2; $3 status, $4 balance, $5 expiry), in one statement. */
const CARD_OPERATION_COMPLETE = sqlStatement(
  repository,
  'completeCardOperation',
  'cards_operation_complete',
  `
  WITH card AS (
    UPDATE cards AS c SET ${cardChangeSet(3, 4, 5)} WHERE c.id = $2::uuid RETURNING c.*
  ), o AS (
    UPDATE card_operations SET ${outcomeSet(6)} WHERE id = $1::uuid RETURNING *
  )
  SELECT ${operationSelect('o', 'u')}, ${cardPartSelect('card')}
  FROM o JOIN card_users u ON u.id = o.card_user_id CROSS JOIN card`,
  OPERATION_AND_CARD_COLUMNS,
);

/**
 * A SYNC the provider answered ($1; its redacted answer $6): the card refreshed ($2; $3 status, $4
 * balance, $5 expiry) and, on the operation, the new balance and the change from the stored one
 * (`amount`: new − previous, NULL when either is unknown). Sent after CARD_LOCK in the same
 * transaction, so that the previous balance is the one the change replaces.
 */
const CARD_SYNC_COMPLETE = sqlStatement(
  repository,
  'completeSync',
  'cards_sync_complete',
  `
  WITH card AS (
    UPDATE cards AS c SET ${cardChangeSet(3, 4, 5)} WHERE c.id = $2::uuid RETURNING c.*
  ), o AS (
    UPDATE card_operations
    SET status = 'SUCCEEDED', completed_at = now(), provider_response = $6::jsonb, new_balance = $4::numeric,
      amount = $4::numeric - (SELECT p.last_known_balance FROM cards p WHERE p.id = $2::uuid)
    WHERE id = $1::uuid
    RETURNING *
  )
  SELECT ${operationSelect('o', 'u')}, ${cardPartSelect('card')}
  FROM o JOIN card_users u ON u.id = o.card_user_id CROSS JOIN card`,
  OPERATION_AND_CARD_COLUMNS,
);

const OPERATION_FIND = sqlStatement(
  repository,
  'findOperation',
  'card_operations_find',
  `
  SELECT ${operationSelect('o', 'u')} FROM card_operations o JOIN card_users u ON u.id = o.card_user_id WHERE o.id = $1::uuid`,
  OPERATION_COLUMNS,
);

export const OPERATION_FILTERS: readonly ListFilter<CardOperationFilter>[] = [
  ['cardUserId', 'user', (n) => `o.card_user_id = $${n}::uuid`],
  ['cardId', 'card', (n) => `o.card_id = $${n}::uuid`],
  ['kind', 'kind', (n) => `o.kind = $${n}::"CardOperationKind"`],
  ['status', 'status', (n) => `o.status = $${n}::"CardOperationStatus"`],
];
export const OPERATION_LIST = keysetListStatements({
  repository,
  usedBy: 'listOperations',
  prefix: 'card_operations_page',
  from: 'card_operations o JOIN card_users u ON u.id = o.card_user_id',
  time: 'o.created_at',
  select: operationSelect('o', 'u'),
  columns: OPERATION_COLUMNS,
  filters: OPERATION_FILTERS,
});

/** What a decided state change did to the card of operation $1: its status $2 (termination is final). */
const CARD_STATUS_OF_RESOLUTION = sqlStatement(
  repository,
  'resolveUnknownOperation',
  'cards_resolution_status',
  `
  UPDATE cards AS c SET ${cardChangeSet(2, 3, 4)}
  FROM card_operations o
  WHERE o.id = $1::uuid AND c.id = o.card_id AND c.status <> 'TERMINATED'`,
);

/**
 * Card users, cards and card operations: with CardListsRepository (their lists), the only places of this area that reach PostgreSQL.
 * Nothing here ever receives a full card number or a CVV (the service keeps them out of every argument).
 */
@Injectable()
export class CardsRepository {
  constructor(private readonly prisma: PrismaService) {}

  // ------------------------------------------------------------------ card users

  /** undefined when the provider's user_id or reference is already stored (unique violation). */
  async createCardUser(user: NewCardUser): Promise<CardUserRecord | undefined> {
    try {
      const [row] = await this.prisma.run(CARD_USER_INSERT, [
        user.ownerId,
        user.providerUserId,
        user.providerReference,
        user.firstName,
        user.lastName,
        user.email,
        user.countryCode,
        user.contact,
        user.dob,
        user.isBusiness,
        user.billingAddress,
        user.billingCity,
        user.billingCountry,
        user.idNumberEncrypted,
        user.businessName,
        user.billingState,
        user.billingPostalCode,
      ]);
      return toCardUser(row);
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  async findCardUser(id: string): Promise<CardUserRecord | undefined> {
    const [row] = await this.prisma.run(CARD_USER_FIND, [id]);
    return row && toCardUser(row);
  }

  /** Merges what the provider said of the user into what we store. */
  async refreshCardUser(id: string, refresh: CardUserRefresh): Promise<CardUserRecord> {
    const [row] = await this.prisma.run(CARD_USER_REFRESH, [
      id,
      refresh.firstName || null,
      refresh.lastName || null,
      refresh.email || null,
      refresh.providerCardIds ?? null,
    ]);
    if (!row) throw new Error(`card user ${id} vanished`);
    return toCardUser(row);
  }

  // ------------------------------------------------------------------ cards

  async findCard(id: string): Promise<CardRecord | undefined> {
    const [row] = await this.prisma.run(CARD_FIND, [id]);
    return row && toCard(row);
  }

  async cardsOfUser(cardUserId: string): Promise<CardRecord[]> {
    return (await this.prisma.run(CARDS_OF_USER, [cardUserId])).map(toCard);
  }

  /**
   * What the provider's card details said. A terminated card stays terminated whatever comes
   * back (termination cannot be undone); a card the provider reports terminated becomes so here.
   */
  async refreshCard(id: string, refresh: CardRefresh): Promise<CardRecord> {
    const [row] = await this.prisma.run(CARD_REFRESH, [id, refresh.status ?? null, refresh.balance ?? null, refresh.expiry || null]);
    if (!row) throw new Error(`card ${id} vanished`);
    return toCard(row);
  }

  // ------------------------------------------------------------------ operations

  /**
   * Stored before the provider is asked: whatever happens next, the operation is visible. With
   * `link`, the idempotency record of the request is linked to it in the same statement, so that
   * a retry after a crash finds the operation (409 idempotency_in_progress, nothing stored, when a
   * retry holds the record already).
   */
  async startOperation(operation: NewCardOperation, link?: OperationLink): Promise<CardOperationRecord> {
    const rows = await this.prisma.run(OPERATION_START, [
      ...linkedInsertValues(randomUUID(), link),
      operation.cardUserId,
      operation.cardId,
      operation.requestedBy,
      operation.kind,
      operation.amount ?? null,
      operation.currency ?? null,
    ]);
    return toOperation(storedRow(rows));
  }

  /** Completes an operation that changes nothing on the card row (a failure, a read). */
  async completeOperation(id: string, outcome: OperationOutcome): Promise<CardOperationRecord> {
    const [row] = await this.prisma.run(OPERATION_COMPLETE, [id, ...outcomeValues(outcome)]);
    if (!row) throw new Error(`card operation ${id} vanished`);
    return toOperation(row);
  }

  /** A card creation the provider accepted: the card (last four digits only) and the operation, together. */
  async completeCardCreation(
    operationId: string,
    card: NewCard,
    outcome: OperationOutcome & { status: 'SUCCEEDED' },
  ): Promise<{ card: CardRecord; operation: CardOperationRecord }> {
    const [row] = await this.prisma.run(CARD_CREATION_COMPLETE, [
      operationId,
      card.cardUserId,
      card.ownerId,
      card.providerCardId,
      card.last4,
      card.expiry,
      card.currency,
      card.status,
      card.balance,
      ...outcomeValues(outcome),
    ]);
    if (!row) throw new Error(`card operation ${operationId} vanished`);
    return toOperationAndCard(row);
  }

  /**
   * A successful operation and what it did to the card, together: the new balance of a top-up or
   * withdrawal, or the new status of a freeze, unfreeze or termination.
   */
  async completeCardOperation(
    operationId: string,
    cardId: string,
    outcome: OperationOutcome & { status: 'SUCCEEDED' },
    change: { status?: CardStatus; balance?: string | null },
  ): Promise<{ card: CardRecord; operation: CardOperationRecord }> {
    const [row] = await this.prisma.run(CARD_OPERATION_COMPLETE, [
      operationId,
      cardId,
      change.status ?? null,
      change.balance ?? null,
      null,
      ...outcomeValues(outcome),
    ]);
    if (!row) throw new Error(`card operation ${operationId} or card ${cardId} vanished`);
    return toOperationAndCard(row);
  }

  /**
   * A SYNC the provider answered: the card refreshed from its details and, on the operation, the
   * new balance and its change from the balance stored until then, under the card's row lock.
   */
  async completeSync(
    operationId: string,
    cardId: string,
    refresh: CardRefresh,
    providerResponse: unknown,
  ): Promise<{ card: CardRecord; operation: CardOperationRecord }> {
    const row = await this.prisma.inTransaction(async (run) => {
      await run(CARD_LOCK, [cardId]);
      const { rows } = await run(CARD_SYNC_COMPLETE, [
        operationId,
        cardId,
        refresh.status ?? null,
        refresh.balance ?? null,
        refresh.expiry || null,
        JSON.stringify(providerResponse ?? null),
      ]);
      return rows[0];
    });
    if (!row) throw new Error(`card operation ${operationId} or card ${cardId} vanished`);
    return toOperationAndCard(row);
  }

  async findOperation(id: string): Promise<CardOperationRecord | undefined> {
    const [row] = await this.prisma.run(OPERATION_FIND, [id]);
    return row && toOperation(row);
  }

  /**
   * A person decides an UNKNOWN operation (resolveProviderOperation: guarded, only UNKNOWN moves,
   * with its audit event); with it, in the same transaction, what a successful state change does
   * to the card. The balance is left as last known: the provider's next answer says it.
   */
  async resolveUnknownOperation(
    id: string,
    resolution: ManualDecision<ManualCardOperationOutcome> & { cardStatus?: CardStatus },
    audit: NewAuditEvent,
  ): Promise<CardOperationRecord | undefined> {
    const { cardStatus } = resolution;
    const moved = await resolveProviderOperation(
      this.prisma,
      CARD_OPERATIONS_TABLE,
      id,
      resolution,
      audit,
      cardStatus && (async (run) => void (await run(CARD_STATUS_OF_RESOLUTION, [id, cardStatus, null, null]))),
    );
    return moved ? this.findOperation(id) : undefined;
  }
}
