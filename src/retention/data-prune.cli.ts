/**
 * `npm run data:prune`: one pass of the retention job now, against DATABASE_URL, safe while the
 * service runs; prints what it deleted per table. Exit codes: 0 done, 1 a failure, 2 no
 * DATABASE_URL, 75 another instance was pruning at that moment (nothing deleted; run it again).
 */
import { ConfigService } from '@nestjs/config';
import { ConfigValidationError, loadAppConfig, loadDotEnvIfPresent, type AppConfig } from '../config/app-config';
import { Database } from '../database/database';
import { prunePass } from './data-retention.job';
import { RetentionRepository } from './retention.repository';
import { OPERATIONAL_TABLES } from './retention-tables';

async function main() {
  loadDotEnvIfPresent();
  const config: AppConfig = loadAppConfig();
  if (!config.databaseUrl) {
    process.stderr.write(
      'DATABASE_URL is not set: name the database to prune (the embedded database is reachable only from its own process).\n',
    );
    process.exit(2);
  }
  const database = new Database(new ConfigService<AppConfig, true>(config));
  try {
    const started = performance.now();
    const pass = await prunePass(new RetentionRepository(database), config.retention);
    const width = Math.max(...OPERATIONAL_TABLES.map((table) => table.length));
    const lines = OPERATIONAL_TABLES.map((table) => `${table.padEnd(width)}  ${pass.deleted[table]} deleted`);
    if (!pass.leader) lines.push('another instance is pruning now: run again later');
    lines.push(
      `(${config.retention.providerCallsDays} days of provider calls, ${config.retention.webhookDays} days of events kept; ${Math.round(performance.now() - started)} ms)`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
    process.exitCode = pass.leader ? 0 : 75;
  } finally {
    await database.onApplicationShutdown();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigValidationError ? error.message : `data prune failed: ${error instanceof Error ? error.message : String(error)}`}\n`,
  );
  process.exit(1);
});
