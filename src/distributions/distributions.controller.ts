import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags, ApiTooManyRequestsResponse } from '@nestjs/swagger';
import { Auth, CurrentUser } from '../auth/auth.decorator';
import { FinanceTask } from '../common/finance-tasks';
import type { AuthUser } from '../auth/auth.types';
import { Idempotent } from '../idempotency/idempotent.decorator';
import {
  CreateFiatDistributionDto,
  CreateInitDistributionDto,
  DistributionDto,
  DistributionPageDto,
  ListDistributionsQueryDto,
} from './distributions.dto';
import { provesNotSent } from '../provider/provider.errors';
import { DistributionsService } from './distributions.service';

const OUTCOMES =
  'Stored PENDING with every share (minor units, largest remainder) before the provider call, then answered: ACCEPTED, REJECTED (refused by the provider; its message in failureReason) or UNKNOWN (the answer was lost: it may have happened; never resent automatically).';

@ApiTags('Distributions')
@Controller('v1/distributions')
export class DistributionsController {
  constructor(private readonly distributions: DistributionsService) {}

  @Post()
  @HttpCode(201)
  @Auth('admin')
  @Idempotent('distributions.init', { releaseOn: provesNotSent })
  @ApiOperation({
    operationId: 'createDistribution',
    summary: 'Initialise a payment for redistribution (provider link/init)',
    description: `${OUTCOMES} A paymentId is used once: a second distribution with it is 409 \`distribution_payment_id_exists\`. What the shares leave of the amount (\`remainder\`) is the payment receiver's.`,
  })
  @ApiCreatedResponse({ type: DistributionDto })
  @ApiTooManyRequestsResponse({
    description: 'The hourly provider budget is spent (Retry-After); nothing was sent or stored and the key may be reused',
  })
  createInit(@CurrentUser() user: AuthUser, @Body() body: CreateInitDistributionDto): Promise<DistributionDto> {
    return this.distributions.createInit(user, body);
  }

  @Post('fiat')
  @HttpCode(201)
  @Auth('admin')
  @Idempotent('distributions.fiat', { releaseOn: provesNotSent })
  @ApiOperation({
    operationId: 'createFiatDistribution',
    summary: 'Redistribute a fiat payment received outside the provider (provider link/fiat-distribution)',
    description: OUTCOMES,
  })
  @ApiCreatedResponse({ type: DistributionDto })
  @ApiTooManyRequestsResponse({
    description: 'The hourly provider budget is spent (Retry-After); nothing was sent or stored and the key may be reused',
  })
  createFiat(@CurrentUser() user: AuthUser, @Body() body: CreateFiatDistributionDto): Promise<DistributionDto> {
    return this.distributions.createFiat(user, body);
  }

  @Get()
  @Auth('finance')
  @FinanceTask('payments', 'Find distributions by status or date')
  @ApiOperation({
    operationId: 'listDistributions',
    summary: 'List distributions, newest first (finance, admin)',
    description: 'Stored distributions, filtered by kind, status and time window, one page at a time (`nextCursor`).',
  })
  @ApiOkResponse({ type: DistributionPageDto })
  list(@Query() query: ListDistributionsQueryDto): Promise<DistributionPageDto> {
    return this.distributions.list(query);
  }

  @Get(':id')
  @Auth('finance')
  @FinanceTask('payments', 'Open one distribution with its shares')
  @ApiOperation({
    operationId: 'getDistribution',
    summary: 'One distribution with its shares (finance, admin)',
    description:
      'The distribution as stored: its shares (beneficiary and amount), the remainder, and how it ended (status, provider message, failure reason).',
  })
  @ApiOkResponse({ type: DistributionDto })
  @ApiNotFoundResponse({ description: 'No such distribution' })
  get(@Param('id') id: string): Promise<DistributionDto> {
    return this.distributions.get(id);
  }
}
