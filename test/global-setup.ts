import { startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { EFFECTIVE_DATABASE_URL_ENV } from './support/test-database';
import { createRunDatabase } from './support/test-database-server';

/**
 * One database for the whole run, migrated with the same code as `npm run db:migrate`:
 * - TEST_DATABASE_URL set: a new database on that server, dropped at the end;
 * - otherwise the embedded PGlite, in memory.
 */
export default async function globalSetup() {
  const serverUrl = process.env.TEST_DATABASE_URL;
  let url: string;
  if (serverUrl) {
    const database = await createRunDatabase(serverUrl, `bff_test_${Date.now()}_${process.pid}`);
    url = database.url;
    (globalThis as Record<string, unknown>).__BFF_TEST_DROP__ = database.drop;
  } else {
    const embedded = await startEmbeddedPostgres({ maxConnections: 200 });
    url = embedded.url;
    (globalThis as Record<string, unknown>).__BFF_TEST_DROP__ = () => embedded.stop();
  }
  // Through `npm run db:migrate`'s own entry point, in a child process: the same code path as
  // production, and the WebAssembly engine's internal timers do not keep jest alive afterwards.
  await promisify(execFile)(process.execPath, ['-r', '@swc-node/register', resolve(__dirname, '../src/database/migrate.cli.ts')], {
    env: { ...process.env, DATABASE_URL: url, NODE_ENV: 'test' },
    cwd: resolve(__dirname, '..'),
  });
  process.env[EFFECTIVE_DATABASE_URL_ENV] = url;
}
