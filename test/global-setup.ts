import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { RUN_DIRECTORY_ENV, RUN_PID_ENV, TEMPLATE_DATABASE_URL_ENV, TEMPLATE_DUMP_FILE } from './support/test-database';
import { createRunDatabase } from './support/test-database-server';

/**
 * One migrated template for the whole run, migrated with the same code as `npm run db:migrate`;
 * each jest worker works on a copy of its own (test/support/worker-database.ts), so files running
 * at once in two workers never see each other's rows:
 * - TEST_DATABASE_URL set: a new database on that server, which workers copy with
 *   `CREATE DATABASE … TEMPLATE`; dropped at the end with the copies;
 * - otherwise an embedded PGlite in memory, migrated, then dumped to a file of the run's directory,
 *   from which each worker starts a PGlite of its own.
 */
export default async function globalSetup() {
  const runDirectory = mkdtempSync(join(tmpdir(), 'bff-test-run-'));
  process.env[RUN_DIRECTORY_ENV] = runDirectory;
  process.env[RUN_PID_ENV] = String(process.pid);
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) {
    const template = await createRunDatabase(serverUrl, `bff_test_${Date.now()}_${process.pid}`);
    (globalThis as Record<string, unknown>).__BFF_TEST_DROP__ = template.drop;
    await migrate(template.url);
    process.env[TEMPLATE_DATABASE_URL_ENV] = template.url;
  } else {
    const embedded = await startEmbeddedPostgres({ maxConnections: 8 });
    try {
      await migrate(embedded.url);
      writeFileSync(join(runDirectory, TEMPLATE_DUMP_FILE), Buffer.from(await (await embedded.dump()).arrayBuffer()));
    } finally {
      await embedded.stop();
    }
  }
}

/**
 * Through `npm run db:migrate`'s own entry point, in a child process: the same code path as
 * production, and the WebAssembly engine's internal timers do not keep jest alive afterwards.
 */
async function migrate(url: string): Promise<void> {
  await promisify(execFile)(process.execPath, ['-r', '@swc-node/register', resolve(__dirname, '../src/database/migrate.cli.ts')], {
    env: { ...process.env, DATABASE_URL: url, NODE_ENV: 'test' },
    cwd: resolve(__dirname, '..'),
  });
}
