import { Body, Controller, Delete, Get, Param, Put } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentUser } from '../auth/auth.decorator';
import type { AuthUser } from '../auth/auth.types';
import { FinanceTask } from '../common/finance-tasks';
import { CustomerLimitDto, SetCustomerLimitDto } from './customer-limits.dto';
import { CustomerLimitsService, SUBJECT_MAX_LENGTH } from './customer-limits.service';

const SUBJECT_PARAM = {
  name: 'subject',
  description: 'The customer: the `sub` of its bearer tokens',
  example: 'user-4821',
  schema: { type: 'string', minLength: 1, maxLength: SUBJECT_MAX_LENGTH },
} as const;

@ApiTags('Customer limits')
@Controller('v1/customer-limits')
export class CustomerLimitsController {
  constructor(private readonly limits: CustomerLimitsService) {}

  @Get(':subject')
  @Auth('finance')
  @FinanceTask('payments', 'See how many provider calls a customer may cause per hour, and how many it used')
  @ApiOperation({
    operationId: 'getCustomerLimit',
    summary: 'A customer’s hourly share of the provider budget',
    description:
      'The calls to the provider’s /api/agent/* (pay-ins, wallet links) this customer’s requests may cause per rolling hour, counted across all instances: its override if an admin set one, else PROVIDER_CUSTOMER_HOURLY_LIMIT; and how many were counted in the last hour. Any subject answers (a customer never seen has the default and 0 used).',
  })
  @ApiParam(SUBJECT_PARAM)
  @ApiOkResponse({ type: CustomerLimitDto })
  @ApiBadRequestResponse({ description: '`validation_failed`: the subject is empty, longer than 100 characters, or not valid text' })
  get(@Param('subject') subject: string): Promise<CustomerLimitDto> {
    return this.limits.get(subject);
  }

  @Put(':subject')
  @Auth('admin')
  @ApiOperation({
    operationId: 'setCustomerLimit',
    summary: 'Set a customer’s own hourly share of the provider budget',
    description:
      'From the next call on, the customer’s requests may cause at most `providerCallsPerHour` provider calls per rolling hour (0 blocks them: `429 customer_limit_reached`). Calls already counted stay counted. Audited (`customer_limit.set`, with the note). Admin only.',
  })
  @ApiParam(SUBJECT_PARAM)
  @ApiOkResponse({ type: CustomerLimitDto })
  @ApiBadRequestResponse({
    description:
      '`validation_failed`, field by field: `providerCallsPerHour` not a whole number from 0 to PROVIDER_AGENT_HOURLY_LIMIT, `note` missing, empty or over 500 characters, `subject` invalid',
  })
  set(@CurrentUser() user: AuthUser, @Param('subject') subject: string, @Body() body: SetCustomerLimitDto): Promise<CustomerLimitDto> {
    return this.limits.set(user, subject, body);
  }

  @Delete(':subject')
  @Auth('admin')
  @ApiOperation({
    operationId: 'clearCustomerLimit',
    summary: 'Return a customer to the default hourly share',
    description:
      'Removes the customer’s override: PROVIDER_CUSTOMER_HOURLY_LIMIT applies again. Audited (`customer_limit.cleared`) when there was an override; without one it changes nothing and answers the default. Admin only.',
  })
  @ApiParam(SUBJECT_PARAM)
  @ApiOkResponse({ type: CustomerLimitDto })
  clear(@CurrentUser() user: AuthUser, @Param('subject') subject: string): Promise<CustomerLimitDto> {
    return this.limits.clear(user, subject);
  }
}
