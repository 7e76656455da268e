import { Module } from '@nestjs/common';
import { DatabaseModule } from '../database/database.module';
import { DataRetentionJob } from './data-retention.job';
import { RetentionRepository } from './retention.repository';

/** The retention job: the provider call log and the events age out; financial records never do. */
@Module({
  imports: [DatabaseModule],
  providers: [RetentionRepository, DataRetentionJob],
  exports: [DataRetentionJob],
})
export class RetentionModule {}
