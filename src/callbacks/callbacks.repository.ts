import type { PageRequest } from '../common/pagination';
import { keysetPage, withinPeriod } from '../database/list-queries';
import { PURGE_STATEMENT_TIMEOUT_MS, TRANSACTION_LIMITS } from '../database/transaction-limits';
import { Inject, Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { ADVISORY_LOCKS, tryTransactionLock } from '../database/advisory-locks';
import { sqlStatement } from '../database/sql-statement';
import type { CallbackResult as DbCallbackResult } from '../generated/prisma/enums';
import type { Proven, SameValues } from '../database/same-values';
import { PrismaService } from '../database/prisma.service';
import { ORDER_CALLBACKS, type OrderCallbacks } from '../orders/order-callbacks.port';
import { decideCallback } from './callback-decision';
import type { CallbackRecord, CallbackResult, IncomingCallback, StoredCallback } from './callback.types';

/** CALLBACK_RESULTS (orders/order.types.ts, through order-callbacks.port.ts) is the database enum, value for value. */
export type CallbackEnumsMatch = Proven<SameValues<CallbackResult, DbCallbackResult>>;

export interface CallbackFilter {
  orderId?: string;
  outcome?: string;
  result?: CallbackResult;
  from?: Date;
  to?: Date;
}

/** The purge's batch: REJECTED callbacks older than $1 days that reached no order, at most $2 of them. */
const PURGE_REJECTED = sqlStatement(
  'callbacks.repository',
  'tryPurgeRejectedAsLeader',
  'callbacks_purge_rejected',
  `
  DELETE FROM provider_callbacks WHERE id IN (
    SELECT id FROM provider_callbacks
    WHERE result = 'REJECTED' AND order_id IS NULL AND received_at < now() - make_interval(days => $1::int)
    LIMIT $2::int)`,
);

/** The stored callbacks: written together with what they do to their order, read, and purged. */
@Injectable()
export class CallbacksRepository {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(ORDER_CALLBACKS) private readonly orders: OrderCallbacks,
  ) {}

  /**
   * Stores the callback and applies what it decides to its order, in one transaction with the
   * order locked: a callback is never stored without its effect, nor applied without its record.
   */
  async storeAndApply(incoming: IncomingCallback): Promise<StoredCallback> {
    return this.prisma.$transaction(async (tx) => {
      const order = incoming.verified ? await this.orders.lockForCallback(tx, incoming.verified.orderId) : undefined;
      const decision = decideCallback(order?.status, incoming.verified?.outcome);
      const row = await tx.providerCallback.create({
        data: {
          orderId: order?.id ?? null,
          pathOrderId: incoming.pathOrderId.slice(0, 100),
          outcome: incoming.outcome.slice(0, 20),
          result: decision.result,
          method: incoming.method,
          query: incoming.query ?? {},
          headers: incoming.headers ?? {},
          contentType: incoming.contentType,
          rawBody: incoming.rawBody,
          remoteIp: incoming.remoteIp,
          requestId: incoming.requestId,
        },
      });
      const callback = toCallback(row);
      if (!order || !decision.transition) return { callback };
      return { callback, event: await this.orders.applyCallbackTransition(tx, order, decision.transition, row.id) };
    }, TRANSACTION_LIMITS);
  }

  async list(filter: CallbackFilter, page: PageRequest): Promise<CallbackRecord[]> {
    const where: Prisma.ProviderCallbackWhereInput = {
      ...(filter.orderId ? { orderId: filter.orderId } : {}),
      ...(filter.outcome ? { outcome: filter.outcome } : {}),
      ...(filter.result ? { result: filter.result } : {}),
      ...withinPeriod('receivedAt', filter),
    };
    const rows = await this.prisma.providerCallback.findMany(keysetPage('receivedAt', where, page));
    return rows.map(toCallback);
  }

  /**
   * Deletes up to `batchSize` REJECTED callbacks older than `olderThanDays`, unless another
   * instance is purging right now (transaction-scoped advisory lock, taken without waiting).
   * Callbacks that reached an order are never purged: they are the order's evidence.
   */
  async tryPurgeRejectedAsLeader(olderThanDays: number, batchSize: number): Promise<{ leader: boolean; purged: number }> {
    return this.prisma.inTransaction(
      async (run) => {
        if (!(await tryTransactionLock(run, ADVISORY_LOCKS.rejectedCallbackPurge))) return { leader: false, purged: 0 };
        return { leader: true, purged: (await run(PURGE_REJECTED, [olderThanDays, batchSize])).count };
      },
      { statementTimeoutMs: PURGE_STATEMENT_TIMEOUT_MS },
    );
  }
}

function toCallback(row: Prisma.ProviderCallbackGetPayload<object>): CallbackRecord {
  return row;
}
