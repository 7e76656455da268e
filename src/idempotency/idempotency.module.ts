import { Global, Module, type DynamicModule } from '@nestjs/common';
import { IdempotencyPurgeScheduler } from './idempotency-purge.scheduler';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyRepository } from './idempotency.repository';
import { IDEMPOTENCY_OPTIONS, IdempotencyService, type IdempotencyOptions } from './idempotency.service';

const PROVIDERS = [IdempotencyRepository, IdempotencyService, IdempotencyInterceptor, IdempotencyPurgeScheduler];
const EXPORTS = [IdempotencyService, IdempotencyInterceptor, IdempotencyRepository];

/**
 * Global, so that any controller can use `@Idempotent(...)`. Import it as is for the defaults
 * (5 s wait, 24 h keys, a lease of the provider timeout plus 5 s), or through `forRoot(options)`.
 */
@Global()
@Module({ providers: PROVIDERS, exports: EXPORTS })
export class IdempotencyModule {
  static forRoot(options: IdempotencyOptions): DynamicModule {
    return {
      module: IdempotencyModule,
      global: true,
      providers: [{ provide: IDEMPOTENCY_OPTIONS, useValue: options }],
      exports: [IDEMPOTENCY_OPTIONS],
    };
  }
}
