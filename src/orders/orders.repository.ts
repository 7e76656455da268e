import type { PageRequest } from '../common/pagination';
import { keysetPage, withinPeriod } from '../database/list-queries';
import { TRANSACTION_LIMITS } from '../database/transaction-limits';
import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../database/prisma.service';
import type {
  CallbackOutcome,
  CallbackRecord,
  CallbackResult,
  ManualActor,
  ManualOrderChange,
  ManualOrderOutcome,
  NewOrder,
  OrderFilter,
  OrderRecord,
  OrderStatus,
  OrderStatusEvent,
  ResolvableGuard,
  StatusChangeRecord,
  SubmissionOutcome,
} from './order.types';
import { CALLBACK_DECIDABLE } from './order.types';
import { ADVISORY_LOCKS } from '../database/advisory-locks';
import { linkIdempotentResource } from '../idempotency/idempotency.repository';
import { appendAuditEvent } from '../audit/audit.repository';
import type { NewAuditEvent } from '../audit/audit.types';

type Tx = Prisma.TransactionClient;
type OrderRow = Prisma.OrderGetPayload<object>;

export const ORDER_EVENTS_CHANNEL = 'order_status';
/** The resource type of an order on its idempotency record. */
export const ORDER_RESOURCE = 'order';

/** A callback as it arrived, before it is stored. */
export type IncomingCallback = Pick<
  CallbackRecord,
  'pathOrderId' | 'outcome' | 'method' | 'query' | 'headers' | 'contentType' | 'rawBody' | 'remoteIp' | 'requestId'
> & {
  /** Set only when the token proved this URL was issued for this order and outcome. */
  verifiedOrderId: string | null;
};

export interface CallbackApplication {
  callback: CallbackRecord;
  event?: OrderStatusEvent;
}

/**
 * Orders, their history and their callbacks. Every state change happens in one transaction with
 * the order row locked, and publishes its event with pg_notify, which PostgreSQL delivers only if
 * the transaction commits.
 */
@Injectable()
export class OrdersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * `idempotencyRecordId`: the record of the request creating the order, linked in this very
   * transaction, so that a retry after a crash finds the order (see linkIdempotentResource).
   */
  async create(order: NewOrder, idempotencyRecordId?: string): Promise<{ order: OrderRecord; event: OrderStatusEvent }> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.order.create({ data: { ...order, status: 'PENDING' } });
      if (idempotencyRecordId) await linkIdempotentResource(tx, idempotencyRecordId, { type: ORDER_RESOURCE, id: row.id });
      const event = await this.recordChange(tx, row.id, null, 'PENDING', 'created', 'Order stored, not yet sent to the provider');
      return { order: toOrder(row), event };
    }, TRANSACTION_LIMITS);
  }

  /** Marks the order as handed to the provider: from here on a crash leaves it visibly in doubt. */
  async markSubmitted(orderId: string): Promise<void> {
    await this.prisma.order.update({ where: { id: orderId }, data: { submittedAt: new Date() } });
  }

  /**
   * Records the provider's answer. Only a PENDING order moves: a callback may already have
   * decided it, in which case the provider's references are still kept.
   */
  async recordSubmission(orderId: string, outcome: SubmissionOutcome): Promise<{ order: OrderRecord; event?: OrderStatusEvent }> {
    return this.prisma.$transaction(async (tx) => {
      const current = await lockOrder(tx, orderId);
      if (!current) throw new Error(`order ${orderId} vanished`);
      const references =
        outcome.status === 'PROCESSING'
          ? {
              providerReference: current.providerReference ?? outcome.providerReference,
              providerTransactionReference: current.providerTransactionReference ?? outcome.providerTransactionReference,
            }
          : outcome.status === 'FAILED' && outcome.providerReference
            ? { providerReference: current.providerReference ?? outcome.providerReference }
            : {};
      if (current.status !== 'PENDING') {
        const row = await tx.order.update({ where: { id: orderId }, data: references });
        return { order: toOrder(row) };
      }
      const row = await tx.order.update({
        where: { id: orderId },
        data: {
          ...references,
          status: outcome.status,
          ...(outcome.status === 'PROCESSING' ? { processingSince: new Date() } : {}),
          ...(outcome.status === 'FAILED' ? { failureReason: outcome.failureReason } : {}),
        },
      });
      const reason = { PROCESSING: 'provider_accepted', FAILED: 'provider_rejected', UNKNOWN: 'provider_outcome_unknown' }[outcome.status];
      const detail = outcome.status === 'FAILED' ? outcome.failureReason : outcome.detail;
      const event = await this.recordChange(tx, orderId, 'PENDING', outcome.status, reason, detail);
      return { order: toOrder(row), event };
    }, TRANSACTION_LIMITS);
  }

  /** Stores the callback and applies what it says, atomically; the stored record says what happened. */
  async applyCallback(incoming: IncomingCallback): Promise<CallbackApplication> {
    return this.prisma.$transaction(async (tx) => {
      const order = incoming.verifiedOrderId ? await lockOrder(tx, incoming.verifiedOrderId) : null;
      const outcome = incoming.outcome as CallbackOutcome;
      const result: CallbackResult = !order ? 'REJECTED' : decideCallback(order.status, outcome);
      const callback = await tx.providerCallback.create({
        data: {
          orderId: order?.id ?? null,
          pathOrderId: incoming.pathOrderId.slice(0, 100),
          outcome: incoming.outcome.slice(0, 20),
          result,
          method: incoming.method,
          query: incoming.query ?? {},
          headers: incoming.headers ?? {},
          contentType: incoming.contentType,
          rawBody: incoming.rawBody,
          remoteIp: incoming.remoteIp,
          requestId: incoming.requestId,
        },
      });
      if (!order || result === 'DUPLICATE') return { callback: toCallback(callback) };
      if (result === 'CONFLICT') {
        await tx.order.update({ where: { id: order.id }, data: { needsReview: true } });
        return { callback: toCallback(callback) };
      }
      const next: OrderStatus = outcome === 'success' ? 'SUCCEEDED' : 'FAILED';
      await tx.order.update({
        where: { id: order.id },
        data: { status: next, ...(next === 'FAILED' ? { failureReason: 'The provider notified a failed payment' } : {}) },
      });
      const event = await this.recordChange(
        tx,
        order.id,
        order.status,
        next,
        outcome === 'success' ? 'callback_success' : 'callback_failure',
        'Decided by the provider callback',
        callback.id,
      );
      return { callback: toCallback(callback), event };
    }, TRANSACTION_LIMITS);
  }

  /**
   * One instance at a time (advisory lock, skipped if taken): PROCESSING orders past their
   * deadline become EXPIRED; orders left PENDING after being handed to the provider (a crash
   * between the call and the write) become UNKNOWN.
   */
  async sweep(expiryMinutes: number, stalePendingSeconds: number): Promise<OrderStatusEvent[] | undefined> {
    return this.prisma.$transaction(async (tx) => {
      const [{ locked }] = await tx.$queryRaw<
        { locked: boolean }[]
      >`SELECT pg_try_advisory_xact_lock(${ADVISORY_LOCKS.orderSweep}) AS locked`;
      if (!locked) return undefined;
      const expired = await tx.$queryRaw<{ id: string }[]>`
        UPDATE orders SET status = 'EXPIRED', updated_at = now()
        WHERE status = 'PROCESSING' AND processing_since < now() - make_interval(mins => ${expiryMinutes})
        RETURNING id::text AS id`;
      const stale = await tx.$queryRaw<{ id: string }[]>`
        UPDATE orders SET status = 'UNKNOWN', updated_at = now()
        WHERE status = 'PENDING' AND submitted_at < now() - make_interval(secs => ${stalePendingSeconds})
        RETURNING id::text AS id`;
      const events: OrderStatusEvent[] = [];
      for (const { id } of expired) {
        events.push(await this.recordChange(tx, id, 'PROCESSING', 'EXPIRED', 'expired', `No callback within ${expiryMinutes} minutes`));
      }
      for (const { id } of stale) {
        events.push(
          await this.recordChange(
            tx,
            id,
            'PENDING',
            'UNKNOWN',
            'submission_interrupted',
            'Sent to the provider, but its answer was never recorded',
          ),
        );
      }
      return events;
    }, TRANSACTION_LIMITS);
  }

  async countByStatus(): Promise<{ status: OrderStatus; count: number }[]> {
    const groups = await this.prisma.order.groupBy({ by: ['status'], _count: { _all: true } });
    return groups.map((g) => ({ status: g.status, count: g._count._all }));
  }

  async findById(id: string): Promise<OrderRecord | undefined> {
    const row = await this.prisma.order.findUnique({ where: { id } });
    return row ? toOrder(row) : undefined;
  }

  async history(orderId: string): Promise<StatusChangeRecord[]> {
    const rows = await this.prisma.orderStatusChange.findMany({ where: { orderId }, orderBy: { id: 'asc' } });
    return rows.map((r) => ({ ...r, fromStatus: r.fromStatus, toStatus: r.toStatus }));
  }

  /**
   * The live streams' catch-up: in one statement, the changes of every watched order after the
   * position its streams have reached. Per-order positions, not one global one: change ids are
   * taken before commit, so a smaller id can become visible after a larger one, but never within
   * one order, whose changes are made with its row locked.
   */
  async changesAfter(positions: { orderId: string; afterChangeId: bigint }[]): Promise<StatusChangeRecord[]> {
    if (positions.length === 0) return [];
    const orderIds = positions.map((p) => p.orderId);
    const afterIds = positions.map((p) => p.afterChangeId.toString());
    // The statuses come back as text, which is exactly an OrderStatus; only the id needs converting.
    const rows = await this.prisma.$queryRaw<StatusChangeRecord[]>`
      SELECT c.id, c.order_id::text AS "orderId", c.from_status::text AS "fromStatus", c.to_status::text AS "toStatus",
             c.reason, c.detail, c.callback_id::text AS "callbackId", c.actor, c.note, c.at
      FROM unnest(${orderIds}::uuid[], ${afterIds}::bigint[]) AS watched(order_id, after_id)
      JOIN order_status_changes c ON c.order_id = watched.order_id AND c.id > watched.after_id
      ORDER BY c.id`;
    return rows.map((r) => ({ ...r, id: BigInt(r.id) }));
  }

  async callbacksOf(orderId: string): Promise<CallbackRecord[]> {
    const rows = await this.prisma.providerCallback.findMany({ where: { orderId }, orderBy: { receivedAt: 'asc' } });
    return rows.map(toCallback);
  }

  async list(filter: OrderFilter, page: PageRequest): Promise<OrderRecord[]> {
    const where: Prisma.OrderWhereInput = {
      ...(filter.customerId ? { customerId: filter.customerId } : {}),
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.currency ? { currency: filter.currency } : {}),
      ...(filter.needsReview !== undefined ? { needsReview: filter.needsReview } : {}),
      ...withinPeriod('createdAt', filter),
    };
    const rows = await this.prisma.order.findMany(keysetPage('createdAt', where, page));
    return rows.map(toOrder);
  }

  private async recordChange(
    tx: Tx,
    orderId: string,
    fromStatus: OrderStatus | null,
    toStatus: OrderStatus,
    reason: string,
    detail?: string,
    callbackId?: string,
    by?: ManualActor,
  ): Promise<OrderStatusEvent> {
    const change = await tx.orderStatusChange.create({
      data: { orderId, fromStatus, toStatus, reason, detail, callbackId, actor: by?.actor, note: by?.note },
    });
    const event: OrderStatusEvent = {
      orderId,
      changeId: String(change.id),
      fromStatus,
      status: toStatus,
      reason,
      at: change.at.toISOString(),
    };
    await tx.$executeRaw`SELECT pg_notify(${ORDER_EVENTS_CHANNEL}, ${JSON.stringify(event)})`;
    return event;
  }

  /**
   * A person decides an order the provider left undecided. The order row is locked, then moved by
   * a guarded UPDATE: a callback committed first leaves nothing to move (undefined), so exactly one
   * of them decides. The history entry, the audit event and the stream event commit together.
   */
  async resolveManually(
    orderId: string,
    outcome: ManualOrderOutcome,
    guard: ResolvableGuard,
    by: ManualActor,
    audit: NewAuditEvent,
  ): Promise<ManualOrderChange | undefined> {
    return this.prisma.$transaction(async (tx) => {
      const current = await lockOrder(tx, orderId);
      if (!current) return undefined;
      const failureReason = outcome === 'FAILED' ? 'Decided FAILED by a person after checking with the provider (manual resolution)' : null;
      const moved = await tx.$queryRaw<{ id: string }[]>`
        UPDATE orders SET status = ${outcome}::"OrderStatus", updated_at = now(),
          failure_reason = COALESCE(${failureReason}, failure_reason)
        WHERE id = ${orderId}::uuid
          AND (status::text = ANY(${[...guard.statuses]}::text[])
            OR (status = 'PENDING' AND created_at < now() - make_interval(secs => ${guard.pendingOlderThanSeconds})))
        RETURNING id::text AS id`;
      if (moved.length === 0) return undefined;
      const fromStatus = current.status;
      const event = await this.recordChange(tx, orderId, fromStatus, outcome, 'manual_resolution', 'Decided by a person', undefined, by);
      await appendAuditEvent(tx, { ...audit, details: { ...audit.details, fromStatus, toStatus: outcome } });
      return { order: toOrder(await tx.order.findUniqueOrThrow({ where: { id: orderId } })), event };
    }, TRANSACTION_LIMITS);
  }

  /** Clears `needsReview` (guarded: only a flagged order moves), with its history entry and audit event. */
  async clearReview(orderId: string, by: ManualActor, audit: NewAuditEvent): Promise<ManualOrderChange | undefined> {
    return this.prisma.$transaction(async (tx) => {
      const current = await lockOrder(tx, orderId);
      if (!current) return undefined;
      const cleared = await tx.$queryRaw<{ id: string }[]>`
        UPDATE orders SET needs_review = false, updated_at = now()
        WHERE id = ${orderId}::uuid AND needs_review
        RETURNING id::text AS id`;
      if (cleared.length === 0) return undefined;
      const status = current.status;
      const event = await this.recordChange(
        tx,
        orderId,
        status,
        status,
        'review_cleared',
        'Reviewed by a person; the status is unchanged',
        undefined,
        by,
      );
      await appendAuditEvent(tx, { ...audit, details: { ...audit.details, status } });
      return { order: toOrder(await tx.order.findUniqueOrThrow({ where: { id: orderId } })), event };
    }, TRANSACTION_LIMITS);
  }
}

function decideCallback(status: OrderStatus, outcome: CallbackOutcome): CallbackResult {
  if (CALLBACK_DECIDABLE.includes(status)) return 'APPLIED';
  const agrees = (status === 'SUCCEEDED' && outcome === 'success') || (status === 'FAILED' && outcome === 'failure');
  return agrees ? 'DUPLICATE' : 'CONFLICT';
}

async function lockOrder(tx: Tx, id: string): Promise<OrderRow | null> {
  await tx.$queryRaw`SELECT id FROM orders WHERE id = ${id}::uuid FOR UPDATE`;
  return tx.order.findUnique({ where: { id } });
}

function toOrder(row: OrderRow): OrderRecord {
  return { ...row, status: row.status, amount: row.amount.toFixed() };
}

function toCallback(row: Prisma.ProviderCallbackGetPayload<object>): CallbackRecord {
  return { ...row, result: row.result };
}
