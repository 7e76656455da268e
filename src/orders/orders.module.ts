import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { CallbackUrlsService } from './callback-urls.service';
import { OrderEventsService } from './order-events.service';
import { OrderExpiryScheduler } from './order-expiry.scheduler';
import { OrderStreams } from './order-streams';
import { OrdersController } from './orders.controller';
import { OrdersRepository } from './orders.repository';
import { OrdersService } from './orders.service';

@Module({
  controllers: [OrdersController],
  providers: [OrdersService, OrdersRepository, OrderEventsService, OrderStreams, OrderExpiryScheduler, CallbackUrlsService],
  imports: [AuditModule],
  exports: [OrdersService, CallbackUrlsService, OrdersRepository, OrderEventsService],
})
export class OrdersModule {}
