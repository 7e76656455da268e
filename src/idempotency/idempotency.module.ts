import { Global, Module } from '@nestjs/common';
import { IdempotencyPurgeScheduler } from './idempotency-purge.scheduler';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';

const PROVIDERS = [IdempotencyRepository, IdempotencyService, IdempotencyInterceptor, IdempotencyPurgeScheduler];
const EXPORTS = [IdempotencyService, IdempotencyInterceptor, IdempotencyRepository];

/**
 * Global, so that any controller can use `@Idempotent(...)`. Its defaults: 5 s wait, 24 h keys, a
 * lease of the provider timeout plus 5 s.
 */
@Global()
@Module({ providers: PROVIDERS, exports: EXPORTS })
export class IdempotencyModule {}
