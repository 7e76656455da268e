import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../auth/auth.decorator';
import { FinanceTask } from '../common/finance-tasks';
import { AttentionReportDto, SummaryDto, SummaryQueryDto } from './reports.dto';
import { ReportsService } from './reports.service';

@ApiTags('Finance')
@Controller('v1/reports')
export class ReportsController {
  constructor(private readonly reports: ReportsService) {}

  @Get('summary')
  @Auth('finance')
  @FinanceTask('reports', 'Count and total the orders of a period, per status and currency')
  @ApiOperation({
    operationId: 'getOrdersSummary',
    summary: 'Orders: count and exact total per status and currency (finance)',
    description:
      'One line per status and currency, totals as exact decimal strings, over the orders created in the optional time window (`from`, `to`).',
  })
  @ApiOkResponse({ type: SummaryDto })
  summary(@Query() query: SummaryQueryDto): Promise<SummaryDto> {
    return this.reports.summary(query);
  }

  @Get('attention')
  @Auth('finance')
  @FinanceTask('attention', 'See what waits for a person to decide')
  @ApiOperation({
    operationId: 'getAttentionReport',
    summary: 'What waits for a person: undecided orders, card operations and distributions (finance, admin)',
    description:
      'Counts, and the 20 oldest of each queue, oldest first: orders UNKNOWN, EXPIRED, stale PENDING (older than the interrupted-work window) and flagged needsReview; card operations and distributions UNKNOWN. An admin decides them with the resolution routes; every decision is in GET /v1/audit-events.',
  })
  @ApiOkResponse({ type: AttentionReportDto })
  attention(): Promise<AttentionReportDto> {
    return this.reports.attention();
  }
}
