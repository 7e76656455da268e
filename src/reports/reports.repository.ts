import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../database/prisma.service';

export interface SummaryRow {
  status: string;
  currency: string;
  count: number;
  /** Exact decimal sum, as PostgreSQL computed it (numeric, no float). */
  total: string;
}

@Injectable()
export class ReportsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async orderSummary(from?: Date, to?: Date): Promise<SummaryRow[]> {
    return this.prisma.$queryRaw<SummaryRow[]>`
      SELECT status::text AS status, currency, count(*)::int AS count, sum(amount)::text AS total
      FROM orders
      WHERE (${from ?? null}::timestamptz IS NULL OR created_at >= ${from ?? null}::timestamptz)
        AND (${to ?? null}::timestamptz IS NULL OR created_at < ${to ?? null}::timestamptz)
      GROUP BY status, currency
      ORDER BY currency, status`;
  }
}

/** One queue of the attention report: how many wait, and the oldest of them. */
export interface AttentionQueue<T> {
  count: number;
  oldest: T[];
}

export interface AttentionOrderRow {
  id: string;
  reference: string;
  status: string;
  amount: string;
  currency: string;
  needsReview: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface AttentionCardOperationRow {
  id: string;
  kind: string;
  cardId: string | null;
  cardUserId: string;
  amount: string | null;
  currency: string | null;
  failureReason: string | null;
  createdAt: Date;
}

export interface AttentionDistributionRow {
  id: string;
  kind: string;
  amount: string;
  currency: string;
  failureReason: string | null;
  createdAt: Date;
}

export interface AttentionRows {
  orders: {
    unknown: AttentionQueue<AttentionOrderRow>;
    expired: AttentionQueue<AttentionOrderRow>;
    stalePending: AttentionQueue<AttentionOrderRow>;
    needsReview: AttentionQueue<AttentionOrderRow>;
  };
  cardOperations: { unknown: AttentionQueue<AttentionCardOperationRow> };
  distributions: { unknown: AttentionQueue<AttentionDistributionRow> };
}

/**
 * What waits for a person, oldest first. Each queue is one filter served by an index on
 * (filter, created_at, id), read backwards: counting and the first rows never scan the table.
 */
@Injectable()
export class AttentionRepository {
  constructor(private readonly prisma: PrismaService) {}

  async attention(limit: number, stalePendingSeconds: number): Promise<AttentionRows> {
    const orderQueue = async (where: Prisma.OrderWhereInput): Promise<AttentionQueue<AttentionOrderRow>> => {
      const [count, rows] = await Promise.all([
        this.prisma.order.count({ where }),
        this.prisma.order.findMany({ where, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], take: limit }),
      ]);
      return {
        count,
        oldest: rows.map((r) => ({
          id: r.id,
          reference: r.reference,
          status: r.status,
          amount: r.amount.toFixed(),
          currency: r.currency,
          needsReview: r.needsReview,
          createdAt: r.createdAt,
          updatedAt: r.updatedAt,
        })),
      };
    };
    // The window is judged by the database clock, like the sweep and the resolution guard.
    const [{ before }] = await this.prisma.$queryRaw<
      { before: Date }[]
    >`SELECT now() - make_interval(secs => ${stalePendingSeconds}) AS before`;
    const unknownOperations = { status: 'UNKNOWN' } as const;
    const [unknown, expired, stalePending, needsReview, operationCount, operations, distributionCount, distributions] = await Promise.all([
      orderQueue({ status: 'UNKNOWN' }),
      orderQueue({ status: 'EXPIRED' }),
      orderQueue({ status: 'PENDING', createdAt: { lt: before } }),
      orderQueue({ needsReview: true }),
      this.prisma.cardOperation.count({ where: unknownOperations }),
      this.prisma.cardOperation.findMany({ where: unknownOperations, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], take: limit }),
      this.prisma.distribution.count({ where: unknownOperations }),
      this.prisma.distribution.findMany({ where: unknownOperations, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], take: limit }),
    ]);
    return {
      orders: { unknown, expired, stalePending, needsReview },
      cardOperations: {
        unknown: {
          count: operationCount,
          oldest: operations.map((o) => ({
            id: o.id,
            kind: o.kind,
            cardId: o.cardId,
            cardUserId: o.cardUserId,
            amount: o.amount?.toFixed() ?? null,
            currency: o.currency,
            failureReason: o.failureReason,
            createdAt: o.createdAt,
          })),
        },
      },
      distributions: {
        unknown: {
          count: distributionCount,
          oldest: distributions.map((d) => ({
            id: d.id,
            kind: d.kind,
            amount: d.amount.toFixed(),
            currency: d.currency,
            failureReason: d.failureReason,
            createdAt: d.createdAt,
          })),
        },
      },
    };
  }
}
