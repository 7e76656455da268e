import { Module } from '@nestjs/common';
import { DatabaseModule } from '../database/database.module';
import { MetricsModule } from '../metrics/metrics.module';
import { HealthController } from './health.controller';
import { HealthRepository } from './health.repository';
import { HealthService } from './health.service';
import { ReplicaMetrics } from './replica-metrics';

@Module({
  imports: [DatabaseModule, MetricsModule],
  controllers: [HealthController],
  providers: [HealthService, HealthRepository, ReplicaMetrics],
})
export class HealthModule {}
