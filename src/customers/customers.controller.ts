import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { Auth, CurrentUser } from '../auth/auth.decorator';
import type { AuthUser } from '../auth/auth.types';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { ErasureDto, RequestErasureDto } from './customer-erasure.dto';
import { CustomerErasureService } from './customer-erasure.service';

const SUBJECT_PARAM = { name: 'subject', description: "The customer's subject: the `sub` of its tokens", example: 'customer-42' };

@ApiTags('Customers')
@Controller('v1/customers')
export class CustomersController {
  constructor(private readonly erasures: CustomerErasureService) {}

  @Post(':subject/erasure')
  @HttpCode(202)
  @Auth('admin')
  @Idempotent('customers.erasure')
  @ApiParam(SUBJECT_PARAM)
  @ApiOperation({
    operationId: 'requestCustomerErasure',
    summary: "Erase a customer's personal data",
    description:
      "Replaces every personal value of the customer (payer name and email, wallet and phone numbers, card users' names, emails, phone numbers, addresses, dates of birth and identity numbers, wallet-link emails) by `[erased]` wherever it is stored: records, provider call log, stored callbacks, event bodies, webhook answers, idempotency answers. Amounts, currencies, statuses, references and times stay, for accounting. Answers 202 with the erasure (PENDING): it is worked through in the background; `GET` shows when it is DONE and what it replaced per table. Audited (`customer.erased`, with the counts, never a value). The provider keeps its own copy of card users: see docs/api/customers.md.",
  })
  @ApiAcceptedResponse({ type: ErasureDto })
  @ApiConflictResponse({
    description:
      '`erasure_blocked`: an order PENDING, PROCESSING or UNKNOWN, a card operation or distribution PENDING or UNKNOWN, or a wallet link being made; `blockingOperations` names them (type, id, status). Nothing was changed.',
  })
  request(@CurrentUser() user: AuthUser, @Param('subject') subject: string, @Body() body: RequestErasureDto): Promise<ErasureDto> {
    return this.erasures.request(user, subject, body);
  }

  @Get(':subject/erasure')
  @Auth('admin')
  @ApiParam(SUBJECT_PARAM)
  @ApiOperation({
    operationId: 'getCustomerErasure',
    summary: 'The latest erasure of a customer',
    description: 'Its state (PENDING, DONE) and, once DONE, how many rows it replaced per table.',
  })
  @ApiOkResponse({ type: ErasureDto })
  @ApiNotFoundResponse({ description: '`not_found`: no erasure was asked for this customer' })
  latest(@Param('subject') subject: string): Promise<ErasureDto> {
    return this.erasures.latest(subject);
  }
}
