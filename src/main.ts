import 'reflect-metadata';
import { ConfigValidationError, loadAppConfig, loadDotEnvIfPresent, openTelemetryEnvironment } from './config/app-config';
import { createLogger, stdoutLogDestination } from './logging/logger';
import { runService, type RunningService } from './service-runner';
import { startTracing } from './tracing/tracing';

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;
/**
 * Under `npm run start:dev`, Ctrl-C reaches the service twice at once: from the terminal, and
 * forwarded by `node --watch`. A repeat within this window is the same request, not an impatient second one.
 */
const REPEATED_SIGNAL_WINDOW_MS = 1_000;
type StopSignal = keyof typeof SIGNAL_EXIT_CODES;

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
  const logger = createLogger(config.logLevel, stdoutLogDestination({ isProduction: config.isProduction }));
  // OpenTelemetry's SDK only when its variables name an OTLP endpoint: otherwise nothing of it is loaded.
  const tracing = await startTracing(openTelemetryEnvironment());
  if (tracing) logger.info({ protocol: tracing.protocol }, 'tracing: spans exported over OTLP/HTTP');

  // The first SIGTERM or SIGINT (Ctrl-C) stops the service cleanly and exits 0: requests in flight
  // finish, event streams end, the embedded database is closed so its data directory opens again
  // without recovery. SIGTERM (a rolling restart) first drains for SHUTDOWN_DRAIN_MS: /health/ready
  // answers 503 while everything else is still served, until the load balancer has moved away. A signal during start-up waits for the start to finish, then stops. A later
  // signal gives up waiting and exits at once with the shell's code for that signal.
  // eslint-disable-next-line prefer-const -- the signal handlers below read it before start-up assigns it; a const would be in its temporal dead zone then
  let service: RunningService | undefined;
  let stopRequested = false;
  let firstSignalAt = 0;
  let firstSignal: StopSignal = 'SIGTERM';
  const stopAndExit = async (running: RunningService) => {
    try {
      await running.stop({ drainMs: firstSignal === 'SIGTERM' ? running.config.shutdownDrainMs : 0 });
      // The spans still buffered, the last requests' included.
      await tracing?.shutdown();
    } catch (error) {
      logger.error({ err: error }, 'the service did not stop cleanly');
      logger.flush();
      process.exit(1);
    }
    logger.info('stopped');
    logger.flush();
    process.exit(0);
  };
  const onSignal = (signal: StopSignal) => {
    if (stopRequested) {
      if (Date.now() - firstSignalAt < REPEATED_SIGNAL_WINDOW_MS) return;
      logger.warn({ signal }, 'second signal: exiting without waiting for a clean stop');
      logger.flush();
      process.exit(SIGNAL_EXIT_CODES[signal]);
    }
    stopRequested = true;
    firstSignalAt = Date.now();
    firstSignal = signal;
    logger.info({ signal }, 'shutting down');
    if (service) void stopAndExit(service);
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  service = await runService(config, logger, { migrateExternalDatabase: process.argv.includes('--migrate') });
  if (stopRequested) await stopAndExit(service);
}

main().catch((error: unknown) => {
  // A mistake found while starting (the identity provider's discovery document names another issuer) is a configuration error too.
  if (error instanceof ConfigValidationError) {
    process.stderr.write(`${error.message}\nThe service did not start. See .env.example for every variable.\n`);
    process.exit(78);
  }
  process.stderr.write(`The service failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
