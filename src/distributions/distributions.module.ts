import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { ProviderModule } from '../provider/provider.module';
import { ProviderOperationsModule } from '../provider-operations/provider-operations.module';
import { DistributionsController } from './distributions.controller';
import { DistributionsRepository } from './distributions.repository';
import { DistributionsService } from './distributions.service';

@Module({
  imports: [AuthModule, DatabaseModule, IdempotencyModule, ProviderModule, ProviderOperationsModule],
  controllers: [DistributionsController],
  providers: [DistributionsService, DistributionsRepository],
  exports: [DistributionsService, DistributionsRepository],
})
export class DistributionsModule {}
