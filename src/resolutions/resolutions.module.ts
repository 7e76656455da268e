import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { CardsModule } from '../cards/cards.module';
import { DistributionsModule } from '../distributions/distributions.module';
import { OrdersModule } from '../orders/orders.module';
import { ClearOrderReviewUseCase } from './clear-order-review.use-case';
import { RESOLUTION_PROVIDERS } from './operation-resolvers';
import { ResolutionsController } from './resolutions.controller';

/**
 * People deciding what the provider left undecided: one resolution use case (ResolveOperationUseCase)
 * for every operation type, by the rules of its registry entry, writing through its area's
 * repository, which commits the change, its history and its audit event together; and the review flag of an order.
 */
@Module({
  imports: [AuthModule, IdempotencyModule, OrdersModule, CardsModule, DistributionsModule],
  controllers: [ResolutionsController],
  providers: [...RESOLUTION_PROVIDERS, ClearOrderReviewUseCase],
})
export class ResolutionsModule {}
