import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { MetricsModule } from '../metrics/metrics.module';
import { ProviderModule } from '../provider/provider.module';
import { AuditModule } from '../audit/audit.module';
import { CallbackUrlsService } from './callback-urls.service';
import { OrderCallbacksAdapter } from './order-callbacks.adapter';
import { ORDER_CALLBACKS } from './order-callbacks.port';
import { OrderEventsService } from './order-events.service';
import { OrderExpiryJob } from './order-expiry.job';
import { OrderStreams } from './order-streams';
import { OrdersController } from './orders.controller';
import { OrdersRepository } from './orders.repository';
import { OrderListsRepository } from './order-lists.repository';
import { OrdersService } from './orders.service';

@Module({
  controllers: [OrdersController],
  providers: [
    OrdersService,
    OrdersRepository,
    OrderListsRepository,
    OrderEventsService,
    OrderStreams,
    OrderExpiryJob,
    CallbackUrlsService,
    // The callbacks area's one way in (order-callbacks.port.ts).
    { provide: ORDER_CALLBACKS, useClass: OrderCallbacksAdapter },
  ],
  imports: [AuditModule, AuthModule, DatabaseModule, IdempotencyModule, MetricsModule, ProviderModule],
  exports: [OrdersService, OrdersRepository, OrderEventsService, ORDER_CALLBACKS],
})
export class OrdersModule {}
