import { Module } from '@nestjs/common';
import { DatabaseModule } from '../database/database.module';
import { IdempotencyPurgeJob } from './idempotency-purge.job';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';

/**
 * Imported by every module whose controllers use `@Idempotent(...)` or whose services register a
 * recovery: one IdempotencyService for the whole app (its recoveries and in-flight records), with
 * the defaults (5 s wait, 24 h keys, a lease of the provider timeout plus 5 s).
 */
@Module({
  imports: [DatabaseModule],
  providers: [IdempotencyRepository, IdempotencyService, IdempotencyInterceptor, IdempotencyPurgeJob],
  exports: [IdempotencyService, IdempotencyInterceptor, IdempotencyRepository],
})
export class IdempotencyModule {}
