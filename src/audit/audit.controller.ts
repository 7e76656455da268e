import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../auth/auth.decorator';
import { FinanceTask } from '../common/finance-tasks';
import { AuditEventPageDto, ListAuditEventsQueryDto } from './audit.dto';
import { AuditService } from './audit.service';

@ApiTags('Finance')
@Controller('v1/audit-events')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @Auth('finance')
  @FinanceTask('audit', 'See who resolved, reviewed, distributed or exported what')
  @ApiOperation({
    operationId: 'listAuditEvents',
    summary: 'Audit trail: who resolved, reviewed, distributed or exported what (finance, admin)',
    description:
      'One event per manual resolution, review clearance, distribution and CSV export, newest first, with the actor (token `sub`), the note, the request id and the filters of an export. Append-only: the database refuses to change or delete an event.',
  })
  @ApiOkResponse({ type: AuditEventPageDto })
  list(@Query() query: ListAuditEventsQueryDto): Promise<AuditEventPageDto> {
    return this.audit.list(query);
  }
}
