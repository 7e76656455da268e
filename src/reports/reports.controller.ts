import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../auth/auth.decorator';
import { SummaryDto, SummaryQueryDto } from './reports.dto';
import { ReportsService } from './reports.service';

@ApiTags('Finance')
@Controller('v1/reports')
export class ReportsController {
  constructor(private readonly reports: ReportsService) {}

  @Get('summary')
  @Auth('finance')
  @ApiOperation({ summary: 'Orders: count and exact total per status and currency (finance)' })
  @ApiOkResponse({ type: SummaryDto })
  summary(@Query() query: SummaryQueryDto): Promise<SummaryDto> {
    return this.reports.summary(query);
  }
}
