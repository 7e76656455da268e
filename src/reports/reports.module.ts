import { Module } from '@nestjs/common';
import { ReportsController } from './reports.controller';
import { AttentionRepository, ReportsRepository } from './reports.repository';
import { ReportsService } from './reports.service';

@Module({ controllers: [ReportsController], providers: [ReportsService, ReportsRepository, AttentionRepository] })
export class ReportsModule {}
