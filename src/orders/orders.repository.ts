import type { PageRequest } from '../common/pagination';
import { TRANSACTION_LIMITS } from '../database/transaction-limits';
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../database/prisma.service';
import type { OrderStatus as DbOrderStatus } from '../generated/prisma/enums';
import type { Proven, SameValues } from '../database/same-values';
import {
  type CallbackTransition,
  type ManualActor,
  type ManualOrderChange,
  type ManualOrderOutcome,
  type NewOrder,
  type OrderDetailRecord,
  type OrderFilter,
  type OrderRecord,
  type OrderStatus,
  type OrderStatusEvent,
  type ResolvableGuard,
  type StatusChangeRecord,
  type SubmissionOutcome,
} from './order.types';
import {
  CHANGES_AFTER,
  COUNT_BY_STATUS,
  CREATE_ORDER,
  CREATE_ORDER_FIELDS,
  eventOf,
  FIND_ORDER,
  FIND_ORDER_DETAIL,
  LIST_ORDERS,
  listStatementFor,
  listValues,
  ORDER_HISTORY,
  RECORD_SUBMISSION,
  SWEEP_ORDERS,
  withoutChange,
  type ChangeColumns,
  type JsonCallback,
  type JsonHistoryEntry,
} from './orders.statements';
import { ADVISORY_LOCKS } from '../database/advisory-locks';
import { IdempotencyInProgressError } from '../idempotency/idempotency.errors';
import { appendAuditEvent } from '../audit/audit.repository';
import type { NewAuditEvent } from '../audit/audit.types';

/** ORDER_STATUSES (order.types.ts) is the database enum, value for value. */
export type OrderEnumsMatch = Proven<SameValues<OrderStatus, DbOrderStatus>>;

type Tx = Prisma.TransactionClient;
type OrderRow = Prisma.OrderGetPayload<object>;

/** A change as its statements return it: the bigint id as text. */
type ChangeRow = Omit<StatusChangeRecord, 'id'> & { id: string };

/**
 * An order as lists and the CSV export read it: what they show, the times already as ISO text
 * (the format of Date#toISOString), the amount as stored.
 */
export type OrderListRow = Pick<
  OrderRecord,
  | 'id'
  | 'reference'
  | 'status'
  | 'amount'
  | 'currency'
  | 'service'
  | 'wallet'
  | 'payer'
  | 'payerEmail'
  | 'description'
  | 'providerReference'
  | 'providerTransactionReference'
  | 'failureReason'
  | 'needsReview'
> & { createdAt: string; updatedAt: string };

export const ORDER_EVENTS_CHANNEL = 'order_status';
/** The resource type of an order on its idempotency record. */
export const ORDER_RESOURCE = 'order';

/**
 * Orders, their history and their callbacks. Every state change happens in one transaction with
 * the order row locked, and publishes its event with pg_notify, which PostgreSQL delivers only if
 * the transaction commits.
 */
@Injectable()
export class OrdersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * One statement: the order (marked as handed to the provider), its history entry, its event and
   * the link of `idempotencyRecordId` to it (a retry after a crash finds the order). A record no
   * longer this request's stores nothing: IdempotencyInProgressError (see linkIdempotentResource).
   */
  async create(order: NewOrder, idempotencyRecordId?: string): Promise<{ order: OrderRecord; event: OrderStatusEvent }> {
    const values = [randomUUID(), ...CREATE_ORDER_FIELDS.map((field) => order[field]), idempotencyRecordId ?? null, ORDER_RESOURCE];
    const [row] = await this.prisma.run<OrderRecord & ChangeColumns>(CREATE_ORDER, values);
    if (!row) throw new IdempotencyInProgressError();
    const created = withoutChange(row);
    return { order: created, event: eventOf(created.id, row, null, 'PENDING', 'created') };
  }

  /**
   * Records the provider's answer in one guarded statement. Only a PENDING order moves: a callback
   * may already have decided it, in which case the provider's references are still kept.
   */
  async recordSubmission(orderId: string, outcome: SubmissionOutcome): Promise<{ order: OrderRecord; event?: OrderStatusEvent }> {
    const references =
      outcome.status === 'PROCESSING'
        ? [outcome.providerReference, outcome.providerTransactionReference]
        : outcome.status === 'FAILED'
          ? [outcome.providerReference ?? null, null]
          : [null, null];
    const reason = { PROCESSING: 'provider_accepted', FAILED: 'provider_rejected', UNKNOWN: 'provider_outcome_unknown' }[outcome.status];
    const detail = outcome.status === 'FAILED' ? outcome.failureReason : outcome.detail;
    const failureReason = outcome.status === 'FAILED' ? outcome.failureReason : null;
    const values = [orderId, outcome.status, ...references, failureReason, reason, detail ?? null];
    const [row] = await this.prisma.run<OrderRecord & ChangeColumns>(RECORD_SUBMISSION, values);
    if (!row) throw new Error(`order ${orderId} vanished`);
    const order = withoutChange(row);
    return { order, event: row.changeId ? eventOf(orderId, row, 'PENDING', outcome.status, reason) : undefined };
  }

  /**
   * For the callbacks area, in the transaction that stores a callback: the order, locked until
   * that transaction ends, so that the callback's decision and its transition see the same status.
   */
  async lockForCallback(tx: Tx, orderId: string): Promise<OrderRecord | undefined> {
    const row = await lockOrder(tx, orderId);
    return row ? toOrder(row) : undefined;
  }

  /**
   * The transition a callback decided, in the transaction that stores it (the order locked first
   * by lockForCallback): a decision with its history entry naming the callback, or a review flag.
   */
  async applyCallbackTransition(
    tx: Tx,
    order: Pick<OrderRecord, 'id' | 'status'>,
    transition: CallbackTransition,
    callbackId: string,
  ): Promise<OrderStatusEvent | undefined> {
    if (transition.kind === 'flag_for_review') {
      await tx.order.update({ where: { id: order.id }, data: { needsReview: true } });
      return undefined;
    }
    const next = transition.to;
    await tx.order.update({
      where: { id: order.id },
      data: { status: next, ...(next === 'FAILED' ? { failureReason: 'The provider notified a failed payment' } : {}) },
    });
    const reason = next === 'SUCCEEDED' ? 'callback_success' : 'callback_failure';
    return this.recordChange(tx, order.id, order.status, next, reason, 'Decided by the provider callback', callbackId);
  }

  /**
   * One instance at a time (advisory lock, skipped if taken): PROCESSING orders past their
   * deadline become EXPIRED; orders left PENDING after being handed to the provider (a crash
   * between the call and the write) become UNKNOWN. One statement (SWEEP_ORDERS), so that a
   * production instance's background work never loads Prisma's query compiler.
   */
  async sweep(expiryMinutes: number, stalePendingSeconds: number): Promise<OrderStatusEvent[] | undefined> {
    const rows = await this.prisma.run<
      {
        locked: boolean;
        orderId: string | null;
        fromStatus: OrderStatus | null;
        status: OrderStatus | null;
        reason: string | null;
      } & ChangeColumns
    >(SWEEP_ORDERS, [
      ADVISORY_LOCKS.orderSweep,
      expiryMinutes,
      `No callback within ${expiryMinutes} minutes`,
      stalePendingSeconds,
      'Sent to the provider, but its answer was never recorded',
    ]);
    if (!rows[0]?.locked) return undefined;
    return rows.flatMap((row) =>
      row.changeId === null ? [] : [eventOf(row.orderId as string, row, row.fromStatus, row.status as OrderStatus, row.reason as string)],
    );
  }

  async countByStatus(): Promise<{ status: OrderStatus; count: number }[]> {
    return this.prisma.run<{ status: OrderStatus; count: number }>(COUNT_BY_STATUS, []);
  }

  async findById(id: string): Promise<OrderRecord | undefined> {
    const [row] = await this.prisma.run<OrderRecord>(FIND_ORDER, [id]);
    return row;
  }

  /** The order with its history and callbacks, in one statement; undefined when it does not exist or `ownerId` does not own it. */
  async findDetail(id: string, ownerId: string | undefined): Promise<OrderDetailRecord | undefined> {
    const [row] = await this.prisma.run<OrderRecord & { history: JsonHistoryEntry[]; callbacks: JsonCallback[] }>(FIND_ORDER_DETAIL, [
      id,
      ownerId ?? null,
    ]);
    if (!row) return undefined;
    const { history, callbacks, ...order } = row;
    return {
      order,
      history: history.map((h) => ({ ...h, at: new Date(h.at) })),
      callbacks: callbacks.map((c) => ({ ...c, receivedAt: new Date(c.receivedAt) })),
    };
  }

  async history(orderId: string): Promise<StatusChangeRecord[]> {
    return withBigIntIds(await this.prisma.run<ChangeRow>(ORDER_HISTORY, [orderId]));
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
    return withBigIntIds(await this.prisma.run<ChangeRow>(CHANGES_AFTER, [orderIds, afterIds]));
  }

  /**
   * A page of orders (or a batch of the CSV export), newest first; every set of filters is served by
   * its index in keyset order (see LIST_ORDERS).
   */
  async list(filter: OrderFilter, page: PageRequest): Promise<OrderListRow[]> {
    return this.prisma.run<OrderListRow>(listStatementFor(LIST_ORDERS, filter), listValues(filter, page));
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

async function lockOrder(tx: Tx, id: string): Promise<OrderRow | null> {
  await tx.$queryRaw`SELECT id FROM orders WHERE id = ${id}::uuid FOR UPDATE`;
  return tx.order.findUnique({ where: { id } });
}

function toOrder(row: OrderRow): OrderRecord {
  return { ...row, status: row.status, amount: row.amount.toFixed() };
}

function withBigIntIds(rows: ChangeRow[]): StatusChangeRecord[] {
  return rows.map((row) => ({ ...row, id: BigInt(row.id) }));
}
