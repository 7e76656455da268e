import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { NewAuditEvent } from '../audit/audit.types';
import { keysetListStatements, type ListFilter } from '../database/list-queries';
import { namedParameters, parameterValues } from '../database/named-parameters';
import { Database } from '../database/database';
import { column, sqlStatement } from '../database/sql-statement';
import { LINK_HELD, linkedInsertValues, OPERATION_LINK, storedRow, type OperationLink } from '../provider-operations/operation-tables';
import { resolveProviderOperation, type ManualDecision } from '../provider-operations/resolve-provider-operation';
import {
  CARD_OPERATION_KINDS,
  CARD_STATUSES,
  type ManualCardOperationOutcome,
  type CardOperationFilter,
  type CardOperationRecord,
  type CardRecord,
  type CardRefresh,
  type CardStatus,
  type NewCard,
  type NewCardOperation,
  type OperationOutcome,
} from './card.types';
import { CARD_OPERATIONS_TABLE } from './card-operations.table';
import {
  CARD_CHANGE_PARAMETERS,
  CARD_PART,
  cardChangeSet,
  OPERATION_AND_CARD_COLUMNS,
  OPERATION_PART,
  OPERATION_ROW,
  operationAndCardSelect,
  OUTCOME_PARAMETERS,
  outcomeSet,
  outcomeValues,
} from './cards.rows';

/** The SQL of CardOperationsRepository, written out (listed in src/queries/card-operations.repository.sql). */
const repository = 'card-operations.repository';

/** Card operations follow the provider-operation lifecycle: declared once, in card-operations.table.ts. */
export { CARD_OPERATIONS_TABLE } from './card-operations.table';

/** After OPERATION_LINK's $1 (the new id) to $10. */
const NEW_OPERATION = namedParameters(
  {
    cardUserId: column.uuid,
    cardId: column.uuid.orNull,
    requestedBy: column.text,
    kind: column.enum('CardOperationKind', CARD_OPERATION_KINDS),
    amount: column.numeric.orNull,
    currency: column.text.orNull,
  },
  11,
);

/** A card operation stored PENDING, linked to the request's idempotency record in the same statement ($1 to $10). */
const OPERATION_START = sqlStatement(
  repository,
  'startOperation',
  'card_operations_start',
  `
  WITH ${OPERATION_LINK}, o AS (
    INSERT INTO card_operations (id, card_user_id, card_id, requested_by, kind, amount, currency, status, created_at)
    SELECT $1::uuid, ${NEW_OPERATION.cardUserId}, ${NEW_OPERATION.cardId}, ${NEW_OPERATION.requestedBy}, ${NEW_OPERATION.kind},
      ${NEW_OPERATION.amount}, ${NEW_OPERATION.currency}, 'PENDING', now()
    WHERE ${LINK_HELD}
    RETURNING *
  )
  SELECT ${OPERATION_ROW.select('o')} FROM o JOIN card_users u ON u.id = o.card_user_id`,
  OPERATION_ROW.columns,
);

const OUTCOME = namedParameters({ operationId: column.uuid, ...OUTCOME_PARAMETERS });

const OPERATION_COMPLETE = sqlStatement(
  repository,
  'completeOperation',
  'card_operations_complete',
  `
  WITH o AS (
    UPDATE card_operations SET ${outcomeSet(OUTCOME)} WHERE id = ${OUTCOME.operationId} RETURNING *
  )
  SELECT ${OPERATION_ROW.select('o')} FROM o JOIN card_users u ON u.id = o.card_user_id`,
  OPERATION_ROW.columns,
);

const CREATION = namedParameters({
  operationId: column.uuid,
  cardUserId: column.uuid,
  ownerId: column.text,
  providerCardId: column.text,
  last4: column.text,
  expiry: column.text,
  currency: column.text,
  status: column.enum('CardStatus', CARD_STATUSES),
  balance: column.numeric,
  ...OUTCOME_PARAMETERS,
});

/**
 * A card creation the provider accepted, in one statement: the card (last four digits only), its
 * provider id added to its user's list (once), and the operation completed and linked to the card.
 */
const CARD_CREATION_COMPLETE = sqlStatement(
  repository,
  'completeCardCreation',
  'cards_creation_complete',
  `
  WITH card AS (
    INSERT INTO cards (id, card_user_id, owner_id, provider_card_id, last4, expiry, currency, status, last_known_balance,
      balance_synced_at, created_at, updated_at)
    VALUES (gen_random_uuid(), ${CREATION.cardUserId}, ${CREATION.ownerId}, ${CREATION.providerCardId}, ${CREATION.last4},
      ${CREATION.expiry}, ${CREATION.currency}, ${CREATION.status}, ${CREATION.balance}, now(), now(), now())
    RETURNING *
  ), user_cards AS (
    UPDATE card_users SET provider_card_ids = array_append(provider_card_ids, ${CREATION.providerCardId}), updated_at = now()
    WHERE id = ${CREATION.cardUserId} AND NOT (${CREATION.providerCardId} = ANY (provider_card_ids))
  ), o AS (
    UPDATE card_operations SET ${outcomeSet(CREATION)}, card_id = (SELECT id FROM card) WHERE id = ${CREATION.operationId} RETURNING *
  )
  SELECT ${operationAndCardSelect}
  FROM o JOIN card_users u ON u.id = o.card_user_id CROSS JOIN card`,
  OPERATION_AND_CARD_COLUMNS,
);

const CARD_CHANGE = namedParameters({ operationId: column.uuid, cardId: column.uuid, ...CARD_CHANGE_PARAMETERS, ...OUTCOME_PARAMETERS });

/** A successful operation and what it did to its card, in one statement. */
const CARD_OPERATION_COMPLETE = sqlStatement(
  repository,
  'completeCardOperation',
  'cards_operation_complete',
  `
  WITH card AS (
    UPDATE cards AS c SET ${cardChangeSet(CARD_CHANGE)} WHERE c.id = ${CARD_CHANGE.cardId} RETURNING c.*
  ), o AS (
    UPDATE card_operations SET ${outcomeSet(CARD_CHANGE)} WHERE id = ${CARD_CHANGE.operationId} RETURNING *
  )
  SELECT ${operationAndCardSelect}
  FROM o JOIN card_users u ON u.id = o.card_user_id CROSS JOIN card`,
  OPERATION_AND_CARD_COLUMNS,
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

const SYNC = namedParameters({ operationId: column.uuid, cardId: column.uuid, ...CARD_CHANGE_PARAMETERS, providerResponse: column.jsonb });

/**
 * A SYNC the provider answered (its redacted answer `providerResponse`): the card refreshed and, on
 * the operation, the new balance and the change from the stored one (`amount`: new − previous,
 * NULL when either is unknown). Sent after CARD_LOCK in the same transaction, so that the previous
 * balance is the one the change replaces.
 */
const CARD_SYNC_COMPLETE = sqlStatement(
  repository,
  'completeSync',
  'cards_sync_complete',
  `
  WITH card AS (
    UPDATE cards AS c SET ${cardChangeSet(SYNC)} WHERE c.id = ${SYNC.cardId} RETURNING c.*
  ), o AS (
    UPDATE card_operations
    SET status = 'SUCCEEDED', completed_at = now(), provider_response = ${SYNC.providerResponse}, new_balance = ${SYNC.balance},
      amount = ${SYNC.balance} - (SELECT p.last_known_balance FROM cards p WHERE p.id = ${SYNC.cardId})
    WHERE id = ${SYNC.operationId}
    RETURNING *
  )
  SELECT ${operationAndCardSelect}
  FROM o JOIN card_users u ON u.id = o.card_user_id CROSS JOIN card`,
  OPERATION_AND_CARD_COLUMNS,
);

const OPERATION_FIND = sqlStatement(
  repository,
  'findOperation',
  'card_operations_find',
  `
  SELECT ${OPERATION_ROW.select('o')} FROM card_operations o JOIN card_users u ON u.id = o.card_user_id WHERE o.id = $1::uuid`,
  OPERATION_ROW.columns,
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
  select: OPERATION_ROW.select('o'),
  columns: OPERATION_ROW.columns,
  filters: OPERATION_FILTERS,
});

const RESOLUTION = namedParameters({ operationId: column.uuid, ...CARD_CHANGE_PARAMETERS });

/** What a decided state change did to the card of the operation: its status (termination is final). */
const CARD_STATUS_OF_RESOLUTION = sqlStatement(
  repository,
  'resolveUnknownOperation',
  'cards_resolution_status',
  `
  UPDATE cards AS c SET ${cardChangeSet(RESOLUTION)}
  FROM card_operations o
  WHERE o.id = ${RESOLUTION.operationId} AND c.id = o.card_id AND c.status <> 'TERMINATED'`,
);

type OperationAndCard = { card: CardRecord; operation: CardOperationRecord };
const operationAndCard = (row: Parameters<typeof OPERATION_PART.read>[0] & Parameters<typeof CARD_PART.read>[0]): OperationAndCard => ({
  operation: OPERATION_PART.read(row),
  card: CARD_PART.read(row),
});

/** Card operations and what their completions do to the cards; never a full card number or a CVV (kept out of every argument). */
@Injectable()
export class CardOperationsRepository {
  constructor(private readonly database: Database) {}

  /**
   * Stored before the provider is asked: whatever happens next, the operation is visible. With
   * `link`, the idempotency record of the request is linked to it in the same statement, so that
   * a retry after a crash finds the operation (409 idempotency_in_progress, nothing stored, when a
   * retry holds the record already).
   */
  async startOperation(operation: NewCardOperation, link?: OperationLink): Promise<CardOperationRecord> {
    const rows = await this.database.run(OPERATION_START, [
      ...linkedInsertValues(randomUUID(), link),
      ...parameterValues(NEW_OPERATION, { ...operation, amount: operation.amount ?? null, currency: operation.currency ?? null }),
    ]);
    return OPERATION_ROW.read(storedRow(rows));
  }

  /** Completes an operation that changes nothing on the card row (a failure, a read). */
  async completeOperation(id: string, outcome: OperationOutcome): Promise<CardOperationRecord> {
    const [row] = await this.database.run(OPERATION_COMPLETE, parameterValues(OUTCOME, { operationId: id, ...outcomeValues(outcome) }));
    if (!row) throw new Error(`card operation ${id} vanished`);
    return OPERATION_ROW.read(row);
  }

  /** A card creation the provider accepted: the card (last four digits only) and the operation, together. */
  async completeCardCreation(
    operationId: string,
    card: NewCard,
    outcome: OperationOutcome & { status: 'SUCCEEDED' },
  ): Promise<OperationAndCard> {
    const values = parameterValues(CREATION, { operationId, ...card, ...outcomeValues(outcome) });
    const [row] = await this.database.run(CARD_CREATION_COMPLETE, values);
    if (!row) throw new Error(`card operation ${operationId} vanished`);
    return operationAndCard(row);
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
  ): Promise<OperationAndCard> {
    const [row] = await this.database.run(
      CARD_OPERATION_COMPLETE,
      parameterValues(CARD_CHANGE, {
        operationId,
        cardId,
        cardStatus: change.status ?? null,
        balance: change.balance ?? null,
        expiry: null,
        ...outcomeValues(outcome),
      }),
    );
    if (!row) throw new Error(`card operation ${operationId} or card ${cardId} vanished`);
    return operationAndCard(row);
  }

  /**
   * A SYNC the provider answered: the card refreshed from its details and, on the operation, the
   * new balance and its change from the balance stored until then, under the card's row lock.
   */
  async completeSync(operationId: string, cardId: string, refresh: CardRefresh, providerResponse: unknown): Promise<OperationAndCard> {
    const values = parameterValues(SYNC, {
      operationId,
      cardId,
      cardStatus: refresh.status ?? null,
      balance: refresh.balance ?? null,
      expiry: refresh.expiry || null,
      providerResponse: JSON.stringify(providerResponse ?? null),
    });
    const row = await this.database.inTransaction(async (run) => {
      await run(CARD_LOCK, [cardId]);
      return (await run(CARD_SYNC_COMPLETE, values)).rows[0];
    });
    if (!row) throw new Error(`card operation ${operationId} or card ${cardId} vanished`);
    return operationAndCard(row);
  }

  async findOperation(id: string): Promise<CardOperationRecord | undefined> {
    const [row] = await this.database.run(OPERATION_FIND, [id]);
    return row && OPERATION_ROW.read(row);
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
    const values = cardStatus && parameterValues(RESOLUTION, { operationId: id, cardStatus, balance: null, expiry: null });
    const moved = await resolveProviderOperation(
      this.database,
      CARD_OPERATIONS_TABLE,
      id,
      resolution,
      audit,
      values && (async (run) => void (await run(CARD_STATUS_OF_RESOLUTION, values))),
    );
    return moved ? this.findOperation(id) : undefined;
  }
}
