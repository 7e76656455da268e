import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { Logger } from 'pino';

export const APP_LOGGER = Symbol('APP_LOGGER');

@Global()
@Module({})
export class LoggingModule {
  static forRoot(logger: Logger): DynamicModule {
    return { module: LoggingModule, global: true, providers: [{ provide: APP_LOGGER, useValue: logger }], exports: [APP_LOGGER] };
  }
}
