import 'reflect-metadata';
import { ConfigValidationError, loadAppConfig, loadDotEnvIfPresent } from './config/app-config';
import { createLogger } from './logging/logger';
import { runService } from './service-runner';

async function main() {
  // A local .env is a development convenience; real deployments set the environment.
  loadDotEnvIfPresent();
  let config;
  try {
    config = loadAppConfig();
  } catch (error) {
    if (error instanceof ConfigValidationError) {
      process.stderr.write(`${error.message}\nThe service did not start. See .env.example for every variable.\n`);
      process.exit(78);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  const service = await runService(config, logger, { migrateExternalDatabase: process.argv.includes('--migrate') });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await service.stop();
    logger.flush();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`The service failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
