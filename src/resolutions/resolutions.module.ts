import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { CardsModule } from '../cards/cards.module';
import { DistributionsModule } from '../distributions/distributions.module';
import { OrdersModule } from '../orders/orders.module';
import { ClearOrderReviewUseCase } from './clear-order-review.use-case';
import { ResolveCardOperationUseCase } from './resolve-card-operation.use-case';
import { ResolveDistributionUseCase } from './resolve-distribution.use-case';
import { ResolveOrderUseCase } from './resolve-order.use-case';
import { ResolutionsController } from './resolutions.controller';

/**
 * People deciding what the provider left undecided: one use case per action. Each writes through
 * its area's repository, which commits the change, its history and its audit event together.
 */
@Module({
  imports: [AuthModule, IdempotencyModule, OrdersModule, CardsModule, DistributionsModule],
  controllers: [ResolutionsController],
  providers: [ResolveOrderUseCase, ClearOrderReviewUseCase, ResolveCardOperationUseCase, ResolveDistributionUseCase],
})
export class ResolutionsModule {}
