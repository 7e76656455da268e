import { Module } from '@nestjs/common';
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
  exports: [OrdersService, CallbackUrlsService],
})
export class OrdersModule {}
