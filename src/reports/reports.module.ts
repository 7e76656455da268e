import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';
import { MetricsModule } from '../metrics/metrics.module';
import { ReportsController } from './reports.controller';
import { AttentionRepository, ReportsRepository } from './reports.repository';
import { ReportsService } from './reports.service';
import { WaitingMetrics } from './waiting-metrics';

@Module({
  imports: [AuthModule, DatabaseModule, MetricsModule],
  controllers: [ReportsController],
  providers: [ReportsService, ReportsRepository, AttentionRepository, WaitingMetrics],
})
export class ReportsModule {}
