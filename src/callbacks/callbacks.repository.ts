import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../database/prisma.service';
import type { CallbackRecord, CallbackResult } from '../orders/order.types';

export interface CallbackFilter {
  orderId?: string;
  outcome?: string;
  result?: CallbackResult;
  from?: Date;
  to?: Date;
}

/** Reads of the stored callbacks (they are written with their order, in the orders repository). */
@Injectable()
export class CallbacksRepository {
  constructor(private readonly prisma: PrismaService) {}

  async list(filter: CallbackFilter, limit: number, after?: { receivedAt: Date; id: string }): Promise<CallbackRecord[]> {
    const where: Prisma.ProviderCallbackWhereInput = {
      ...(filter.orderId ? { orderId: filter.orderId } : {}),
      ...(filter.outcome ? { outcome: filter.outcome } : {}),
      ...(filter.result ? { result: filter.result } : {}),
      ...(filter.from || filter.to ? { receivedAt: { ...(filter.from ? { gte: filter.from } : {}), ...(filter.to ? { lt: filter.to } : {}) } } : {}),
    };
    const rows = await this.prisma.providerCallback.findMany({
      where: after ? { AND: [where, { OR: [{ receivedAt: { lt: after.receivedAt } }, { receivedAt: after.receivedAt, id: { lt: after.id } }] }] } : where,
      orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }],
      take: limit,
    });
    return rows.map((r) => ({ ...r, result: r.result as CallbackResult }));
  }
}
