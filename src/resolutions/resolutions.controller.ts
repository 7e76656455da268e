import { Body, Controller, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, CurrentUser } from '../auth/auth.decorator';
import type { AuthUser } from '../auth/auth.types';
import { CardOperationDto } from '../cards/card-operations.dto';
import { DistributionDto } from '../distributions/distributions.dto';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { OrderDetailDto } from '../orders/orders.dto';
import { ClearOrderReviewUseCase } from './clear-order-review.use-case';
import {
  RESOLVE_CARD_OPERATION,
  RESOLVE_DISTRIBUTION,
  RESOLVE_ORDER,
  type ResolveCardOperation,
  type ResolveDistribution,
  type ResolveOrder,
} from './operation-resolvers';
import { ClearOrderReviewDto, ResolveCardOperationDto, ResolveDistributionDto, ResolveOrderDto } from './resolutions.dto';

const KEPT = 'The actor (token `sub`) and the note are kept forever, with the request id, in the audit trail (GET /v1/audit-events).';

/** What people decide when the provider left something undecided (merchant-api.md). Admin only. */
@ApiTags('Finance')
@Controller('v1')
export class ResolutionsController {
  constructor(
    @Inject(RESOLVE_ORDER) private readonly resolveOrder: ResolveOrder,
    private readonly clearOrderReview: ClearOrderReviewUseCase,
    @Inject(RESOLVE_CARD_OPERATION) private readonly resolveCardOperation: ResolveCardOperation,
    @Inject(RESOLVE_DISTRIBUTION) private readonly resolveDistribution: ResolveDistribution,
  ) {}

  @Post('orders/:id/resolution')
  @HttpCode(200)
  @Auth('admin')
  @Idempotent('orders.resolve')
  @ApiOperation({
    operationId: 'resolveOrder',
    summary: 'Decide an UNKNOWN, EXPIRED or stale PENDING order by hand',
    description: `After checking the provider's dashboard or statement. From UNKNOWN, EXPIRED, or PENDING older than the interrupted-work window; any other status is 409 \`order_not_resolvable\`. The history gets \`reason: manual_resolution\` with the actor and the note; the order's live streams see it. A later provider callback that agrees is DUPLICATE; one that contradicts is CONFLICT and sets needsReview. ${KEPT}`,
  })
  @ApiOkResponse({ type: OrderDetailDto, description: 'The order as now decided, with its history' })
  @ApiNotFoundResponse({ description: 'No such order' })
  @ApiConflictResponse({
    description: '`order_not_resolvable`: the order is not UNKNOWN, EXPIRED or stale PENDING (a callback may have decided it first)',
  })
  resolveOrderRoute(@CurrentUser() user: AuthUser, @Param('id') id: string, @Body() body: ResolveOrderDto): Promise<OrderDetailDto> {
    return this.resolveOrder.execute(user, id, body);
  }

  @Post('orders/:id/review')
  @HttpCode(200)
  @Auth('admin')
  @ApiOperation({
    operationId: 'clearOrderReview',
    summary: 'Clear the needsReview flag of an order after looking at it',
    description: `The status does not change; the history gets \`reason: review_cleared\` with the actor and the note. 409 \`order_review_not_needed\` when the order is not flagged. ${KEPT}`,
  })
  @ApiOkResponse({ type: OrderDetailDto, description: 'The order, no longer flagged, with its history' })
  @ApiNotFoundResponse({ description: 'No such order' })
  @ApiConflictResponse({ description: '`order_review_not_needed`: needsReview is already false' })
  clearOrderReviewRoute(
    @CurrentUser() user: AuthUser,
    @Param('id') id: string,
    @Body() body: ClearOrderReviewDto,
  ): Promise<OrderDetailDto> {
    return this.clearOrderReview.execute(user, id, body);
  }

  @Post('card-operations/:id/resolution')
  @HttpCode(200)
  @Auth('admin')
  @Idempotent('card-operations.resolve')
  @ApiOperation({
    operationId: 'resolveCardOperation',
    summary: 'Decide an UNKNOWN card operation by hand',
    description: `From UNKNOWN only (else 409 \`card_operation_not_resolvable\`). A freeze, unfreeze or termination declared SUCCEEDED changes the card's status too; a top-up or withdrawal leaves the stored balance as last known (the next GET /v1/cards/{id} reads it from the provider). ${KEPT}`,
  })
  @ApiOkResponse({ type: CardOperationDto, description: 'The operation as now decided' })
  @ApiNotFoundResponse({ description: 'No such card operation' })
  @ApiConflictResponse({ description: '`card_operation_not_resolvable`: the operation is not UNKNOWN' })
  resolveCardOperationRoute(
    @CurrentUser() user: AuthUser,
    @Param('id') id: string,
    @Body() body: ResolveCardOperationDto,
  ): Promise<CardOperationDto> {
    return this.resolveCardOperation.execute(user, id, body);
  }

  @Post('distributions/:id/resolution')
  @HttpCode(200)
  @Auth('admin')
  @Idempotent('distributions.resolve')
  @ApiOperation({
    operationId: 'resolveDistribution',
    summary: 'Decide an UNKNOWN distribution by hand',
    description: `From UNKNOWN only (else 409 \`distribution_not_resolvable\`): ACCEPTED when the provider did redistribute, REJECTED when it did not. ${KEPT}`,
  })
  @ApiOkResponse({ type: DistributionDto, description: 'The distribution as now decided' })
  @ApiNotFoundResponse({ description: 'No such distribution' })
  @ApiConflictResponse({ description: '`distribution_not_resolvable`: the distribution is not UNKNOWN' })
  resolveDistributionRoute(
    @CurrentUser() user: AuthUser,
    @Param('id') id: string,
    @Body() body: ResolveDistributionDto,
  ): Promise<DistributionDto> {
    return this.resolveDistribution.execute(user, id, body);
  }
}
