import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';
import { ReportsController } from './reports.controller';
import { AttentionRepository, ReportsRepository } from './reports.repository';
import { ReportsService } from './reports.service';

@Module({
  imports: [AuthModule, DatabaseModule],
  controllers: [ReportsController],
  providers: [ReportsService, ReportsRepository, AttentionRepository],
})
export class ReportsModule {}
