import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { listeningAddress } from './common/listening-address';
import type { AppConfig } from './config/app-config';
import { createApp } from './create-app';
import type { EmbeddedPostgres } from './database/embedded-postgres';
import { migrationDatabaseUrl } from './database/session-database-url';
import { HealthService } from './health/health.service';
import type { RunningSandbox } from './sandbox/sandbox.server';

export interface RunningService {
  app: NestFastifyApplication;
  config: AppConfig;
  url: string;
  embeddedDatabase?: EmbeddedPostgres;
  sandbox?: RunningSandbox;
  /**
   * Stops the instance. With `drainMs` (SIGTERM), /health/ready answers 503 at once and everything
   * else is served as before for that long, so that the load balancer stops sending requests here;
   * then new connections are refused, requests in flight finish and live streams end with a
   * `retry:` hint. Without it, the drain is skipped (Ctrl-C, tests).
   */
  stop(options?: { drainMs?: number }): Promise<void>;
}

export interface RunOptions {
  /** Apply pending migrations to an external DATABASE_URL (development `npm start`; never in start:prod). */
  migrateExternalDatabase: boolean;
}

/**
 * Starts what the configuration leaves out, then the API: the embedded PostgreSQL (always
 * migrated: it is ours) when there is no DATABASE_URL, the provider sandbox when there is no
 * PROVIDER_BASE_URL. In production neither default exists (loadAppConfig refuses them).
 */
export async function runService(baseConfig: AppConfig, logger: Logger, options: RunOptions): Promise<RunningService> {
  const config: AppConfig = { ...baseConfig, provider: { ...baseConfig.provider } };
  const started: { stop(): Promise<void> }[] = [];
  let embeddedDatabase: EmbeddedPostgres | undefined;
  let sandbox: RunningSandbox | undefined;
  try {
    // The embedded database, the migrator and the sandbox are loaded only when used: a production
    // start (external database, migrated beforehand, real provider) never pays for their modules.
    if (!config.databaseUrl) {
      const { startEmbeddedPostgres } = await import('./database/embedded-postgres');
      const dataDir = resolve(config.embeddedDataDir);
      embeddedDatabase = await startEmbeddedPostgres({ dataDir });
      started.push(embeddedDatabase);
      config.databaseUrl = embeddedDatabase.url;
      logger.info({ dataDir }, 'embedded PostgreSQL (PGlite) started');
    }
    if (!baseConfig.databaseUrl || options.migrateExternalDatabase) {
      const { applyMigrations } = await import('./database/migrator');
      const applied = await applyMigrations(migrationDatabaseUrl(config));
      logger.info({ applied }, applied.length ? 'migrations applied' : 'database schema up to date');
    }
    if (!config.provider.baseUrl) {
      const { startSandbox } = await import('./sandbox/sandbox.server');
      sandbox = await startSandbox({
        apiKey: config.provider.apiKey,
        secretKey: config.provider.secretKey,
        spAuthToken: config.provider.spAuthToken,
        cardOperationParam: config.card.operationParam,
        cardAmountParam: config.card.amountParam,
        cardCurrencyParam: config.card.currencyParam,
        logger: (msg, data) => logger.child({ component: 'sandbox' }).info(data ?? {}, msg),
      });
      started.push({ stop: () => sandbox!.close() });
      config.provider.baseUrl = sandbox.url;
      config.provider.linkBaseUrl ??= sandbox.url;
      logger.info({ url: sandbox.url }, 'provider sandbox started in-process');
    }
    const app = await createApp(config, logger);
    await app.listen({ port: config.port, host: config.host });
    const address = app.getHttpServer().address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const listening = listeningAddress(typeof address === 'object' && address ? address.address : config.host, port);
    const url = listening.url;
    logger.info({ url, bound: listening.bound, docs: `${url}/docs` }, listening.message);
    return {
      app,
      config,
      url,
      embeddedDatabase,
      sandbox,
      async stop({ drainMs = 0 } = {}) {
        app.get(HealthService).beginDrain();
        if (drainMs > 0) {
          logger.info({ drainMs }, 'draining: /health/ready answers 503, requests still served');
          await sleep(drainMs);
        }
        await app.close();
        for (const part of started.reverse()) await part.stop();
      },
    };
  } catch (error) {
    for (const part of started.reverse()) await part.stop().catch(() => undefined);
    throw error;
  }
}
