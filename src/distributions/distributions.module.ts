import { DistributionsSweepJob } from './distributions-sweep.job';
import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { ProviderModule } from '../provider/provider.module';
import { DistributionsController } from './distributions.controller';
import { DistributionsRepository } from './distributions.repository';
import { DistributionsService } from './distributions.service';

@Module({
  imports: [AuthModule, DatabaseModule, IdempotencyModule, ProviderModule],
  controllers: [DistributionsController],
  providers: [DistributionsService, DistributionsRepository, DistributionsSweepJob],
  exports: [DistributionsService, DistributionsRepository],
})
export class DistributionsModule {}
