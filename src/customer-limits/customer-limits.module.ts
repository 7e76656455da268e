import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';
import { MetricsModule } from '../metrics/metrics.module';
import { CustomerLimitsController } from './customer-limits.controller';
import { CustomerLimitsRepository } from './customer-limits.repository';
import { CustomerLimitsService } from './customer-limits.service';

/** Customers' hourly shares of the provider budget: read by finance, set by admins, audited. */
@Module({
  imports: [AuthModule, DatabaseModule, MetricsModule],
  controllers: [CustomerLimitsController],
  providers: [CustomerLimitsService, CustomerLimitsRepository],
})
export class CustomerLimitsModule {}
