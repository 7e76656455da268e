/**
 * `npm run db:migrate`: applies pending migrations to DATABASE_DIRECT_URL, or DATABASE_URL when
 * that is not a pooler (the `prisma migrate deploy` of this project, through the WebAssembly schema
 * engine: nothing is downloaded).
 */
import { ConfigValidationError, loadAppConfig, loadDotEnvIfPresent } from '../config/app-config';
import { applyMigrations } from './migrator';
import { migrationDatabaseUrl } from './session-database-url';

async function main() {
  loadDotEnvIfPresent();
  const config = loadAppConfig();
  if (!config.databaseUrl) {
    process.stderr.write('DATABASE_URL is not set: nothing to migrate (the embedded database migrates itself at `npm start`).\n');
    process.exit(2);
  }
  const applied = await applyMigrations(migrationDatabaseUrl(config));
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
  // The WebAssembly engine leaves timers behind; the work is done.
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof ConfigValidationError ? error.message : `migration failed: ${error instanceof Error ? error.message : String(error)}`}\n`,
  );
  process.exit(1);
});
