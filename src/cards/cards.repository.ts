import type { PageRequest } from '../common/pagination';
import { keysetPage } from '../database/list-queries';
import { TRANSACTION_LIMITS } from '../database/transaction-limits';
import { markInterruptedUnknown } from '../database/interrupted-work';
import { isUniqueViolation } from '../database/unique-violation';
import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../database/prisma.service';
import { linkIdempotentResource, type IdempotencyLink } from '../idempotency/idempotency.repository';
import { appendAuditEvent } from '../audit/audit.repository';
import type { NewAuditEvent } from '../audit/audit.types';
import type {
  CardFilter,
  CardOperationFilter,
  CardOperationRecord,
  CardRecord,
  CardRefresh,
  CardStatus,
  CardUserFilter,
  CardUserRecord,
  CardUserRefresh,
  NewCard,
  NewCardOperation,
  NewCardUser,
  OperationOutcome,
} from './card.types';
import { outcomeData, toCard, toCardUser, toOperation, WITH_OWNER, type CardRow } from './cards.rows';

/**
 * Card users, cards and card operations: the only user of Prisma in this area. Nothing here ever
 * receives a full card number or a CVV (the service keeps them out of every argument).
 */
@Injectable()
export class CardsRepository {
  constructor(private readonly prisma: PrismaService) {}

  // ------------------------------------------------------------------ card users

  /** undefined when the provider's user_id or reference is already stored (unique violation). */
  async createCardUser(user: NewCardUser): Promise<CardUserRecord | undefined> {
    try {
      return toCardUser(await this.prisma.cardUser.create({ data: user }));
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  async findCardUser(id: string): Promise<CardUserRecord | undefined> {
    const row = await this.prisma.cardUser.findUnique({ where: { id } });
    return row ? toCardUser(row) : undefined;
  }

  /** Merges what the provider said of the user into what we store. */
  async refreshCardUser(id: string, refresh: CardUserRefresh): Promise<CardUserRecord> {
    const row = await this.prisma.cardUser.update({
      where: { id },
      data: {
        ...(refresh.firstName ? { firstName: refresh.firstName } : {}),
        ...(refresh.lastName ? { lastName: refresh.lastName } : {}),
        ...(refresh.email ? { email: refresh.email } : {}),
        ...(refresh.providerCardIds ? { providerCardIds: refresh.providerCardIds } : {}),
        lastSyncedAt: new Date(),
      },
    });
    return toCardUser(row);
  }

  async listCardUsers(filter: CardUserFilter, page: PageRequest): Promise<CardUserRecord[]> {
    const where: Prisma.CardUserWhereInput = filter.ownerId ? { ownerId: filter.ownerId } : {};
    const rows = await this.prisma.cardUser.findMany(keysetPage('createdAt', where, page));
    return rows.map(toCardUser);
  }

  // ------------------------------------------------------------------ cards

  async findCard(id: string): Promise<CardRecord | undefined> {
    const row = await this.prisma.card.findUnique({ where: { id } });
    return row ? toCard(row) : undefined;
  }

  async cardsOfUser(cardUserId: string): Promise<CardRecord[]> {
    const rows = await this.prisma.card.findMany({ where: { cardUserId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    return rows.map(toCard);
  }

  async listCards(filter: CardFilter, page: PageRequest): Promise<CardRecord[]> {
    const where: Prisma.CardWhereInput = {
      ...(filter.ownerId ? { ownerId: filter.ownerId } : {}),
      ...(filter.cardUserId ? { cardUserId: filter.cardUserId } : {}),
      ...(filter.status ? { status: filter.status } : {}),
    };
    const rows = await this.prisma.card.findMany(keysetPage('createdAt', where, page));
    return rows.map(toCard);
  }

  /**
   * What the provider's card details said. A terminated card stays terminated whatever comes
   * back (termination cannot be undone); a card the provider reports terminated becomes so here.
   */
  async refreshCard(id: string, refresh: CardRefresh): Promise<CardRecord> {
    return this.prisma.$transaction(async (tx) => {
      const current = await lockCard(tx, id);
      const terminated = current.status === 'TERMINATED';
      const status: CardStatus | undefined = terminated ? undefined : refresh.status;
      const row = await tx.card.update({
        where: { id },
        data: {
          ...(status ? { status } : {}),
          ...(status === 'TERMINATED' ? { terminatedAt: new Date() } : {}),
          ...(refresh.expiry ? { expiry: refresh.expiry } : {}),
          ...(refresh.balance !== undefined ? { lastKnownBalance: refresh.balance, balanceSyncedAt: new Date() } : {}),
        },
      });
      return toCard(row);
    }, TRANSACTION_LIMITS);
  }

  // ------------------------------------------------------------------ operations

  /**
   * Stored before the provider is asked: whatever happens next, the operation is visible. With
   * `link`, the idempotency record of the request is linked to it in the same transaction, so that
   * a retry after a crash finds the operation (see linkIdempotentResource).
   */
  async startOperation(operation: NewCardOperation, link?: IdempotencyLink): Promise<CardOperationRecord> {
    const create = (client: Prisma.TransactionClient) =>
      client.cardOperation.create({
        data: {
          cardUserId: operation.cardUserId,
          cardId: operation.cardId,
          requestedBy: operation.requestedBy,
          kind: operation.kind,
          amount: operation.amount,
          currency: operation.currency,
          status: 'PENDING',
        },
        include: WITH_OWNER,
      });
    if (!link) return toOperation(await create(this.prisma));
    return this.prisma.$transaction(async (tx) => {
      const row = await create(tx);
      await linkIdempotentResource(tx, link.recordId, { type: link.type, id: row.id });
      return toOperation(row);
    }, TRANSACTION_LIMITS);
  }

  /**
   * Operations still PENDING long after they were handed to the provider: the process died
   * between the call and the write. They become UNKNOWN (the money may have moved), visibly.
   */
  async markInterruptedOperationsUnknown(olderThanSeconds: number): Promise<number> {
    return markInterruptedUnknown(this.prisma, 'card_operations', olderThanSeconds);
  }

  /** Completes an operation that changes nothing on the card row (a failure, a read). */
  async completeOperation(id: string, outcome: OperationOutcome): Promise<CardOperationRecord> {
    const row = await this.prisma.cardOperation.update({ where: { id }, data: outcomeData(outcome), include: WITH_OWNER });
    return toOperation(row);
  }

  /** A card creation the provider accepted: the card (last four digits only) and the operation, together. */
  async completeCardCreation(
    operationId: string,
    card: NewCard,
    outcome: OperationOutcome & { status: 'SUCCEEDED' },
  ): Promise<{ card: CardRecord; operation: CardOperationRecord }> {
    return this.prisma.$transaction(async (tx) => {
      const created = await tx.card.create({
        data: {
          cardUserId: card.cardUserId,
          ownerId: card.ownerId,
          providerCardId: card.providerCardId,
          last4: card.last4,
          expiry: card.expiry,
          currency: card.currency,
          status: card.status,
          lastKnownBalance: card.balance,
          balanceSyncedAt: new Date(),
        },
      });
      const user = await tx.cardUser.findUniqueOrThrow({ where: { id: card.cardUserId }, select: { providerCardIds: true } });
      if (!user.providerCardIds.includes(card.providerCardId)) {
        await tx.cardUser.update({
          where: { id: card.cardUserId },
          data: { providerCardIds: [...user.providerCardIds, card.providerCardId] },
        });
      }
      const operation = await tx.cardOperation.update({
        where: { id: operationId },
        data: { ...outcomeData(outcome), cardId: created.id },
        include: WITH_OWNER,
      });
      return { card: toCard(created), operation: toOperation(operation) };
    }, TRANSACTION_LIMITS);
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
    return this.prisma.$transaction(async (tx) => {
      const current = await lockCard(tx, cardId);
      // Termination is final: nothing brings a terminated card back.
      const status = current.status === 'TERMINATED' ? undefined : change.status;
      const card = await tx.card.update({
        where: { id: cardId },
        data: {
          ...(status ? { status } : {}),
          ...(status === 'TERMINATED' ? { terminatedAt: new Date() } : {}),
          ...(change.balance !== undefined && change.balance !== null
            ? { lastKnownBalance: change.balance, balanceSyncedAt: new Date() }
            : {}),
        },
      });
      const operation = await tx.cardOperation.update({ where: { id: operationId }, data: outcomeData(outcome), include: WITH_OWNER });
      return { card: toCard(card), operation: toOperation(operation) };
    }, TRANSACTION_LIMITS);
  }

  async findOperation(id: string): Promise<CardOperationRecord | undefined> {
    const row = await this.prisma.cardOperation.findUnique({ where: { id }, include: WITH_OWNER });
    return row ? toOperation(row) : undefined;
  }

  async listOperations(filter: CardOperationFilter, page: PageRequest): Promise<CardOperationRecord[]> {
    const where: Prisma.CardOperationWhereInput = {
      ...(filter.cardUserId ? { cardUserId: filter.cardUserId } : {}),
      ...(filter.cardId ? { cardId: filter.cardId } : {}),
      ...(filter.kind ? { kind: filter.kind } : {}),
      ...(filter.status ? { status: filter.status } : {}),
    };
    const rows = await this.prisma.cardOperation.findMany({ ...keysetPage('createdAt', where, page), include: WITH_OWNER });
    return rows.map(toOperation);
  }

  /**
   * A person decides an UNKNOWN operation. Guarded (only UNKNOWN moves), so that two decisions
   * never both apply; with it, what a successful state change does to the card, and the audit
   * event, in one transaction. The balance is left as last known: the provider's next answer says it.
   */
  async resolveUnknownOperation(
    id: string,
    resolution: { status: 'SUCCEEDED' | 'FAILED'; actor: string; note: string; cardStatus?: CardStatus },
    audit: NewAuditEvent,
  ): Promise<CardOperationRecord | undefined> {
    return this.prisma.$transaction(async (tx) => {
      const failureReason =
        resolution.status === 'FAILED' ? 'Decided FAILED by a person after checking with the provider (manual resolution)' : null;
      const moved = await tx.$queryRaw<{ id: string; card_id: string | null }[]>`
        UPDATE card_operations SET status = ${resolution.status}::"CardOperationStatus", failure_reason = ${failureReason},
          resolved_by = ${resolution.actor}, resolution_note = ${resolution.note}, resolved_at = now()
        WHERE id = ${id}::uuid AND status = 'UNKNOWN'
        RETURNING id::text AS id, card_id::text AS card_id`;
      if (moved.length === 0) return undefined;
      const cardId = moved[0].card_id;
      if (cardId && resolution.cardStatus) {
        const card = await lockCard(tx, cardId);
        // Termination is final: nothing brings a terminated card back.
        if (card.status !== 'TERMINATED') {
          await tx.card.update({
            where: { id: cardId },
            data: { status: resolution.cardStatus, ...(resolution.cardStatus === 'TERMINATED' ? { terminatedAt: new Date() } : {}) },
          });
        }
      }
      await appendAuditEvent(tx, { ...audit, details: { ...audit.details, fromStatus: 'UNKNOWN', toStatus: resolution.status } });
      return toOperation(await tx.cardOperation.findUniqueOrThrow({ where: { id }, include: WITH_OWNER }));
    }, TRANSACTION_LIMITS);
  }
}

async function lockCard(tx: Prisma.TransactionClient, id: string): Promise<CardRow> {
  await tx.$queryRaw`SELECT id FROM cards WHERE id = ${id}::uuid FOR UPDATE`;
  return tx.card.findUniqueOrThrow({ where: { id } });
}
