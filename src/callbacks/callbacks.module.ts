import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';
import { MetricsModule } from '../metrics/metrics.module';
import { OrdersModule } from '../orders/orders.module';
import { CallbacksController } from './callbacks.controller';
import { CallbacksRepository } from './callbacks.repository';
import { CallbacksService } from './callbacks.service';
import { RejectedCallbackPurgeScheduler } from './rejected-callback-purge.scheduler';

@Module({
  imports: [AuthModule, DatabaseModule, MetricsModule, OrdersModule],
  controllers: [CallbacksController],
  providers: [CallbacksService, CallbacksRepository, RejectedCallbackPurgeScheduler],
})
export class CallbacksModule {}
