import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { formatStoredAmount } from '../common/money';
import { periodOf } from '../common/pagination';
import type { AppConfig } from '../config/app-config';
import { interruptedAfterSeconds } from '../common/scheduled-job';
import type { AttentionReportDto, SummaryDto, SummaryQueryDto } from './reports.dto';
import { AttentionRepository, ReportsRepository } from './reports.repository';

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

  /**
   * What waits for a person: each queue's count and its oldest items, oldest first, for every
   * registered operation table (its report key, then its queues, as AttentionReportDto declares them).
   */
  async attention(): Promise<AttentionReportDto> {
    const window = interruptedAfterSeconds(this.providerTimeoutMs);
    const tables = await this.attentionQueues.attention(ATTENTION_QUEUE_SIZE, window);
    const shown = (row: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(row).map(([name, value]) => [
          name,
          value instanceof Date
            ? value.toISOString()
            : name === 'amount'
              ? formatStoredAmount(value as string | null, row.currency as string | null, this.currencies)
              : value,
        ]),
      );
    const queues = Object.fromEntries(
      Object.entries(tables).map(([key, table]) => [
        key,
        Object.fromEntries(Object.entries(table).map(([name, q]) => [name, { count: q.count, oldest: q.oldest.map(shown) }])),
      ]),
    );
    // The report's shape is the registry's (one key per registered table, one per queue), which AttentionReportDto writes out for the document.
    return { generatedAt: new Date().toISOString(), stalePendingAfterSeconds: window, ...queues } as unknown as AttentionReportDto;
  }
}
