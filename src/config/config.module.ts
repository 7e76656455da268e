import type { DynamicModule } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import type { AppConfig } from './app-config';

/**
 * @nestjs/config's ConfigModule, global, serving `config`: the AppConfig that loadAppConfig read
 * and validated once (every problem reported at once, exit 78 in src/main.ts) and the runner
 * completed (embedded database, sandbox). Inject `ConfigService<AppConfig, true>` and read a
 * section once, in the constructor: `config.get('provider', { infer: true })`.
 *
 * The module reads nothing itself: no .env (the entry points load it, loadDotEnvIfPresent), no
 * process.env (not at boot, validatePredefined: false, nor on a missing key, skipProcessEnv), so
 * what the ConfigService serves is the object the caller built, a test's overrides included.
 */
export function configModuleFor(config: AppConfig): Promise<DynamicModule> {
  return ConfigModule.forRoot({
    isGlobal: true,
    ignoreEnvFile: true,
    validatePredefined: false,
    skipProcessEnv: true,
    load: [() => config],
  });
}
