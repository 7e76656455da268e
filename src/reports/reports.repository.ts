import { Injectable } from '@nestjs/common';
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
