import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { formatStoredAmount } from '../common/money';
import { periodOf } from '../common/pagination';
import type { AppConfig } from '../config/app-config';
import { interruptedAfterSeconds } from '../common/scheduled-job';
import type { AttentionReportDto, SummaryDto, SummaryQueryDto } from './reports.dto';
import { AttentionRepository, ReportsRepository, type AttentionQueue } from './reports.repository';

/** How many of the oldest items each attention queue shows (the counts are complete). */
export const ATTENTION_QUEUE_SIZE = 20;

@Injectable()
export class ReportsService {
  private readonly currencies: AppConfig['currencies'];
  private readonly reportsTimeZone: string;
  private readonly providerTimeoutMs: number;

  constructor(
    private readonly reports: ReportsRepository,
    private readonly attentionQueues: AttentionRepository,
    config: ConfigService<AppConfig, true>,
  ) {
    this.currencies = config.get('currencies', { infer: true });
    this.reportsTimeZone = config.get('reportsTimeZone', { infer: true });
    this.providerTimeoutMs = config.get('provider', { infer: true }).timeoutMs;
  }

  /** Count and exact total per status and currency; totals are summed by PostgreSQL as numeric. */
  async summary(query: SummaryQueryDto): Promise<SummaryDto> {
    const { from, to } = periodOf(query, this.reportsTimeZone);
    const rows = await this.reports.orderSummary(from, to);
    return {
      // The window as instants: what a day (`2026-11-01`) meant in REPORTS_TIMEZONE.
      from: from?.toISOString() ?? null,
      to: to?.toISOString() ?? null,
      lines: rows.map((row) => ({
        status: row.status,
        currency: row.currency,
        count: row.count,
        total: formatStoredAmount(row.total, row.currency, this.currencies),
      })),
    };
  }

  /** What waits for a person: each queue's count and its oldest items, oldest first. */
  async attention(): Promise<AttentionReportDto> {
    const window = interruptedAfterSeconds(this.providerTimeoutMs);
    const rows = await this.attentionQueues.attention(ATTENTION_QUEUE_SIZE, window);
    const queue = <R extends { createdAt: Date; updatedAt?: Date; amount: string | null; currency: string | null }>(
      q: AttentionQueue<R>,
    ) => ({
      count: q.count,
      oldest: q.oldest.map((row) => ({
        ...row,
        amount: formatStoredAmount(row.amount, row.currency, this.currencies),
        createdAt: row.createdAt.toISOString(),
        ...(row.updatedAt ? { updatedAt: row.updatedAt.toISOString() } : {}),
      })),
    });
    return {
      generatedAt: new Date().toISOString(),
      stalePendingAfterSeconds: window,
      orders: {
        unknown: queue(rows.orders.unknown),
        expired: queue(rows.orders.expired),
        stalePending: queue(rows.orders.stalePending),
        needsReview: queue(rows.orders.needsReview),
      },
      cardOperations: { unknown: queue(rows.cardOperations.unknown) },
      distributions: { unknown: queue(rows.distributions.unknown) },
    };
  }
}
