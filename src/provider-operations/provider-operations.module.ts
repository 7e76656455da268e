import { Module } from '@nestjs/common';
import { DatabaseModule } from '../database/database.module';
import { InterruptedOperationsSweepJob } from './interrupted-operations-sweep.job';

/**
 * The lifecycle of operations on the provider (ARCHITECTURE.md, "Operations on the provider"): the
 * functions of provider-operation.ts and resolve-provider-operation.ts, and the one
 * interrupted-work sweep over every registered operation table. Imported by every area whose
 * operations follow it.
 */
@Module({
  imports: [DatabaseModule],
  providers: [InterruptedOperationsSweepJob],
  exports: [InterruptedOperationsSweepJob],
})
export class ProviderOperationsModule {}
