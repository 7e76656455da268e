import { Injectable } from '@nestjs/common';
import { parseStoredDecimal } from '../common/money';
import { periodOf } from '../common/pagination';
import type { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import type { SummaryDto, SummaryQueryDto } from './reports.dto';
import { ReportsRepository } from './reports.repository';

@Injectable()
export class ReportsService {
  constructor(
    private readonly reports: ReportsRepository,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  /** Count and exact total per status and currency; totals are summed by PostgreSQL as numeric. */
  async summary(query: SummaryQueryDto): Promise<SummaryDto> {
    const { from, to } = periodOf(query);
    const rows = await this.reports.orderSummary(from, to);
    return {
      from: query.from ?? null,
      to: query.to ?? null,
      lines: rows.map((row) => {
        const rule = this.config.currencies[row.currency];
        return { status: row.status, currency: row.currency, count: row.count, total: rule ? parseStoredDecimal(row.total, rule).toString() : row.total };
      }),
    };
  }
}
