import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';
import { MetricsModule } from '../metrics/metrics.module';
import { OrdersModule } from '../orders/orders.module';
import { CallbacksController } from './callbacks.controller';
import { CallbacksRepository } from './callbacks.repository';
import { CallbacksService } from './callbacks.service';
import { RejectedCallbackPurgeJob } from './rejected-callback-purge.job';

@Module({
  imports: [AuthModule, DatabaseModule, MetricsModule, OrdersModule],
  controllers: [CallbacksController],
  providers: [CallbacksService, CallbacksRepository, RejectedCallbackPurgeJob],
})
export class CallbacksModule {}
