import type { PageRequest } from '../common/pagination';
import { keysetPage, withinPeriod } from '../database/list-queries';
import { PURGE_TRANSACTION_LIMITS } from '../database/transaction-limits';
import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { ADVISORY_LOCKS } from '../database/advisory-locks';
import { PrismaService } from '../database/prisma.service';
import type { CallbackRecord, CallbackResult } from '../orders/order.types';

export interface CallbackFilter {
  orderId?: string;
  outcome?: string;
  result?: CallbackResult;
  from?: Date;
  to?: Date;
}

/** Reads and the purge of the stored callbacks (they are written with their order, in the orders repository). */
@Injectable()
export class CallbacksRepository {
  constructor(private readonly prisma: PrismaService) {}

  async list(filter: CallbackFilter, page: PageRequest): Promise<CallbackRecord[]> {
    const where: Prisma.ProviderCallbackWhereInput = {
      ...(filter.orderId ? { orderId: filter.orderId } : {}),
      ...(filter.outcome ? { outcome: filter.outcome } : {}),
      ...(filter.result ? { result: filter.result } : {}),
      ...withinPeriod('receivedAt', filter),
    };
    const rows = await this.prisma.providerCallback.findMany(keysetPage('receivedAt', where, page));
    return rows.map((r) => ({ ...r, result: r.result }));
  }

  /**
   * Deletes up to `batchSize` REJECTED callbacks older than `olderThanDays`, unless another
   * instance is purging right now (transaction-scoped advisory lock, taken without waiting).
   * Callbacks that reached an order are never purged: they are the order's evidence.
   */
  async tryPurgeRejectedAsLeader(olderThanDays: number, batchSize: number): Promise<{ leader: boolean; purged: number }> {
    return this.prisma.$transaction(async (tx) => {
      // Read as text: never depends on how the driver adapter maps booleans.
      const [lock] = await tx.$queryRaw<
        { locked: string }[]
      >`SELECT pg_try_advisory_xact_lock(${ADVISORY_LOCKS.rejectedCallbackPurge}::bigint)::text AS locked`;
      if (lock?.locked !== 'true') return { leader: false, purged: 0 };
      const purged = await tx.$executeRaw`
        DELETE FROM provider_callbacks WHERE id IN (
          SELECT id FROM provider_callbacks
          WHERE result = 'REJECTED' AND order_id IS NULL AND received_at < now() - make_interval(days => ${olderThanDays})
          LIMIT ${batchSize})`;
      return { leader: true, purged };
    }, PURGE_TRANSACTION_LIMITS);
  }
}
