import { Module } from '@nestjs/common';
import { OrdersModule } from '../orders/orders.module';
import { CallbacksController } from './callbacks.controller';
import { CallbacksRepository } from './callbacks.repository';
import { CallbacksService } from './callbacks.service';
import { RejectedCallbackPurgeScheduler } from './rejected-callback-purge.scheduler';

@Module({
  imports: [OrdersModule],
  controllers: [CallbacksController],
  providers: [CallbacksService, CallbacksRepository, RejectedCallbackPurgeScheduler],
})
export class CallbacksModule {}
