import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Database, type TransactionRun } from '../database/database';
import { idempotencyLinkValues, type IdempotencyClaim } from '../idempotency/idempotency.repository';
import { IdempotencyInProgressError } from '../idempotency/idempotency.errors';
import { appendAuditEvent } from '../audit/audit.repository';
import type { NewAuditEvent } from '../audit/audit.types';
import { budgetSlotValues, type BudgetShareRow, type BudgetSlotRequest } from '../provider/agent-budget-take';
import { customerLimitReached } from '../provider/customer-share';
import { CREATE_ORDER, createdOrder, NEW_ORDER, orderWasCreated } from './order-create.statement';
import {
  type CallbackTransition,
  type ManualActor,
  type ManualOrderChange,
  type ManualOrderOutcome,
  type NewOrder,
  type OrderDetailRecord,
  type OrderRecord,
  type OrderStatus,
  type OrderStatusEvent,
  type ResolvableGuard,
  type StatusChangeRecord,
  type SubmissionOutcome,
} from './order.types';
import { parameterValues } from '../database/named-parameters';
import { eventOf, ORDER_ROW, STATUS_CHANGE_ROW, SUBMISSION_ROW } from './orders.rows';
import {
  CHANGE_PARAMETERS,
  CHANGES_AFTER,
  CLEAR_REVIEW,
  COUNT_BY_STATUS,
  DECIDE_BY_CALLBACK,
  FIND_ORDER,
  FIND_ORDER_DETAIL,
  FLAG_FOR_REVIEW,
  LOCK_ORDER,
  ORDER_HISTORY,
  RECORD_CHANGE,
  RECORD_SUBMISSION,
  RESOLVE_MANUALLY,
  SUBMISSION_PARAMETERS,
  SWEEP_ORDERS,
} from './orders.statements';
import { ADVISORY_LOCKS } from '../database/advisory-locks';
import { ORDER_RESOURCE } from './payin-orders.table';
import type { Proven, SameValues } from '../database/same-values';
import type { OrderStatus as DbOrderStatus } from '../generated/prisma/enums';

/** ORDER_STATUSES (order.types.ts) is the database enum, value for value. */
export type OrderEnumsMatch = Proven<SameValues<OrderStatus, DbOrderStatus>>;

/** The answer a request under `@Idempotent` stores with the write that records the provider's answer (see recordSubmission). */
export interface InlineAnswer {
  recordId: string;
  status: number;
  /** The answer's JSON text before and after its `updatedAt`, the one value only the write knows. */
  textBeforeUpdatedAt: string;
  textAfterUpdatedAt: string;
}

export const ORDER_EVENTS_CHANNEL = 'order_status';
/** The resource type of an order on its idempotency record: declared with pay-in orders' operation type. */
export { ORDER_RESOURCE };

/**
 * Orders, their history and their callbacks. Every state change happens in one transaction with
 * the order row locked, and publishes its event with pg_notify, which PostgreSQL delivers only if
 * the transaction commits.
 */
@Injectable()
export class OrdersRepository {
  constructor(private readonly database: Database) {}

  /**
   * One round trip before the pay-in: the order (marked as handed to the provider), its history
   * entry, its event, the request's claim of its Idempotency-Key linked to it (`claim`: the
   * recovery point) and, with `slot`, the pay-in's slot of the /api/agent budget and of the customer's
   * share. A key held by another request stores nothing: IdempotencyInProgressError; nor does a spent
   * share: CustomerLimitReachedError.
   */
  async create(
    order: NewOrder,
    claim: IdempotencyClaim | undefined,
    slot: BudgetSlotRequest | null,
  ): Promise<{ order: OrderRecord; event: OrderStatusEvent; budgetTaken: boolean; share: BudgetShareRow }> {
    const id = randomUUID();
    const values = [
      ...parameterValues(NEW_ORDER, { id, ...order }),
      ...idempotencyLinkValues(claim, { type: ORDER_RESOURCE, id }),
      ...budgetSlotValues(slot),
    ];
    const [row] = await this.database.run(CREATE_ORDER, values);
    if (row.customerRefused) throw customerLimitReached(row);
    if (!orderWasCreated(row)) throw new IdempotencyInProgressError();
    const event = eventOf(id, row, null, 'PENDING', 'created');
    return { order: createdOrder(id, order, row), event, budgetTaken: row.budgetTaken, share: row };
  }

  /**
   * One round trip after the pay-in: the provider's answer, in one guarded statement. Only a
   * PENDING order moves: a callback may already have decided it, in which case the provider's
   * references are still kept. With `answer`, the idempotent answer is stored in the same
   * statement when the order was still exactly as created (`answerStored`); else the caller's
   * interceptor stores it.
   */
  async recordSubmission(
    stored: OrderRecord,
    outcome: SubmissionOutcome,
    answer?: InlineAnswer,
  ): Promise<{ order: OrderRecord; event?: OrderStatusEvent; answerStored: boolean }> {
    const orderId = stored.id;
    const { providerReference, providerTransactionReference, failureReason } = submissionColumns(outcome);
    const reason = { PROCESSING: 'provider_accepted', FAILED: 'provider_rejected', UNKNOWN: 'provider_outcome_unknown' }[outcome.status];
    const detail = outcome.status === 'FAILED' ? outcome.failureReason : outcome.detail;
    const values = parameterValues(SUBMISSION_PARAMETERS, {
      orderId,
      status: outcome.status,
      providerReference,
      providerTransactionReference,
      failureReason,
      reason,
      detail: detail ?? null,
      answerStatus: answer?.status ?? null,
      answerRecordId: answer?.recordId ?? null,
      answerTextBeforeUpdatedAt: answer?.textBeforeUpdatedAt ?? null,
      answerTextAfterUpdatedAt: answer?.textAfterUpdatedAt ?? null,
    });
    const [row] = await this.database.run(RECORD_SUBMISSION, values);
    if (!row) throw new Error(`order ${orderId} vanished`);
    return {
      // The columns no write changes after the creation are as stored; the others as the statement left them.
      order: { ...stored, ...SUBMISSION_ROW.pick(row) },
      event: row.changeId ? eventOf(orderId, row, 'PENDING', outcome.status, reason) : undefined,
      answerStored: row.answerStored,
    };
  }

  /**
   * For the callbacks area, in the transaction that stores a callback: the order, locked until
   * that transaction ends, so that the callback's decision and its transition see the same status.
   */
  async lockForCallback(run: TransactionRun, orderId: string): Promise<OrderRecord | undefined> {
    const { rows } = await run(LOCK_ORDER, [orderId]);
    return rows[0] && ORDER_ROW.read(rows[0]);
  }

  /**
   * The transition a callback decided, in the transaction that stores it (the order locked first
   * by lockForCallback): a decision with its history entry naming the callback, or a review flag.
   */
  async applyCallbackTransition(
    run: TransactionRun,
    order: Pick<OrderRecord, 'id' | 'status'>,
    transition: CallbackTransition,
    callbackId: string,
  ): Promise<OrderStatusEvent | undefined> {
    if (transition.kind === 'flag_for_review') {
      await run(FLAG_FOR_REVIEW, [order.id]);
      return undefined;
    }
    const next = transition.to;
    await run(DECIDE_BY_CALLBACK, [order.id, next, 'The provider notified a failed payment']);
    const reason = next === 'SUCCEEDED' ? 'callback_success' : 'callback_failure';
    return recordChange(run, order.id, order.status, next, reason, 'Decided by the provider callback', callbackId);
  }

  /**
   * One instance at a time (advisory lock, skipped if taken): PROCESSING orders past their
   * deadline become EXPIRED; orders left PENDING after being handed to the provider (a crash
   * between the call and the write) become UNKNOWN. One statement (SWEEP_ORDERS).
   */
  async sweep(expiryMinutes: number, stalePendingSeconds: number): Promise<OrderStatusEvent[] | undefined> {
    const rows = await this.database.run(SWEEP_ORDERS, [
      ADVISORY_LOCKS.orderSweep,
      expiryMinutes,
      `No callback within ${expiryMinutes} minutes`,
      stalePendingSeconds,
      'Sent to the provider, but its answer was never recorded',
    ]);
    if (!rows[0]?.locked) return undefined;
    return rows.flatMap((row) =>
      row.changeId === null || row.orderId === null || row.status === null || row.reason === null
        ? []
        : [eventOf(row.orderId, row, row.fromStatus, row.status, row.reason)],
    );
  }

  async countByStatus(): Promise<{ status: OrderStatus; count: number }[]> {
    return this.database.run(COUNT_BY_STATUS, []);
  }

  async findById(id: string): Promise<OrderRecord | undefined> {
    const [row] = await this.database.run(FIND_ORDER, [id]);
    return row && ORDER_ROW.read(row);
  }

  /** The order with its history and callbacks, in one statement; undefined when it does not exist or `ownerId` does not own it. */
  async findDetail(id: string, ownerId: string | undefined): Promise<OrderDetailRecord | undefined> {
    const [row] = await this.database.run(FIND_ORDER_DETAIL, [id, ownerId ?? null]);
    if (!row) return undefined;
    const { history, callbacks } = row;
    return {
      order: ORDER_ROW.pick(row),
      history: history.map((h) => ({ ...h, at: new Date(h.at) })),
      callbacks: callbacks.map((c) => ({ ...c, receivedAt: new Date(c.receivedAt) })),
    };
  }

  async history(orderId: string): Promise<StatusChangeRecord[]> {
    return (await this.database.run(ORDER_HISTORY, [orderId])).map(STATUS_CHANGE_ROW.read);
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
    return (await this.database.run(CHANGES_AFTER, [orderIds, afterIds])).map(STATUS_CHANGE_ROW.read);
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
    return this.database.inTransaction(async (run) => {
      const [current] = (await run(LOCK_ORDER, [orderId])).rows;
      if (!current) return undefined;
      const failureReason = outcome === 'FAILED' ? 'Decided FAILED by a person after checking with the provider (manual resolution)' : null;
      const [moved] = (await run(RESOLVE_MANUALLY, [orderId, outcome, failureReason, [...guard.statuses], guard.pendingOlderThanSeconds]))
        .rows;
      if (!moved) return undefined;
      const fromStatus = current.status;
      const event = await recordChange(run, orderId, fromStatus, outcome, 'manual_resolution', 'Decided by a person', undefined, by);
      await appendAuditEvent(run, { ...audit, details: { ...audit.details, fromStatus, toStatus: outcome } });
      return { order: ORDER_ROW.read(moved), event };
    });
  }

  /** Clears `needsReview` (guarded: only a flagged order moves), with its history entry and audit event. */
  async clearReview(orderId: string, by: ManualActor, audit: NewAuditEvent): Promise<ManualOrderChange | undefined> {
    return this.database.inTransaction(async (run) => {
      const [current] = (await run(LOCK_ORDER, [orderId])).rows;
      if (!current) return undefined;
      const [cleared] = (await run(CLEAR_REVIEW, [orderId])).rows;
      if (!cleared) return undefined;
      const status = current.status;
      const event = await recordChange(
        run,
        orderId,
        status,
        status,
        'review_cleared',
        'Reviewed by a person; the status is unchanged',
        undefined,
        by,
      );
      await appendAuditEvent(run, { ...audit, details: { ...audit.details, status } });
      return { order: ORDER_ROW.read(cleared), event };
    });
  }
}

/** The provider's references and the failure of an outcome, as RECORD_SUBMISSION takes them. */
function submissionColumns(outcome: SubmissionOutcome) {
  if (outcome.status === 'PROCESSING')
    return {
      providerReference: outcome.providerReference,
      providerTransactionReference: outcome.providerTransactionReference,
      failureReason: null,
    };
  if (outcome.status === 'FAILED')
    return {
      providerReference: outcome.providerReference ?? null,
      providerTransactionReference: null,
      failureReason: outcome.failureReason,
    };
  return { providerReference: null, providerTransactionReference: null, failureReason: null };
}

/** What an order looks like once RECORD_SUBMISSION applied `outcome` to it as created (all but its new updatedAt). */
export function submittedOrder(order: OrderRecord, outcome: SubmissionOutcome): OrderRecord {
  return { ...order, status: outcome.status, ...submissionColumns(outcome) };
}

async function recordChange(
  run: TransactionRun,
  orderId: string,
  fromStatus: OrderStatus | null,
  toStatus: OrderStatus,
  reason: string,
  detail?: string,
  callbackId?: string,
  by?: ManualActor,
): Promise<OrderStatusEvent> {
  const [change] = (
    await run(
      RECORD_CHANGE,
      parameterValues(CHANGE_PARAMETERS, {
        orderId,
        fromStatus,
        toStatus,
        reason,
        detail: detail ?? null,
        callbackId: callbackId ?? null,
        actor: by?.actor ?? null,
        note: by?.note ?? null,
      }),
    )
  ).rows;
  return eventOf(orderId, change, fromStatus, toStatus, reason);
}
