import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { usingRealPostgres } from './test-database';
import { createRunDatabase } from './test-database-server';

const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);

/**
 * A migrated database for one test file alone, beside the run's shared one: a new database on
 * TEST_DATABASE_URL's server, or an embedded PostgreSQL of its own. For a file that must see only
 * its own rows (a walkthrough whose lists and screenshots show what it made, a command that goes
 * over every row). `drop` removes it.
 */
export async function databaseOfItsOwn(name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const database = usingRealPostgres()
    ? await createRunDatabase(process.env.TEST_DATABASE_URL!, `${name}_${process.pid}_${Date.now()}`)
    : await startEmbeddedPostgres({ maxConnections: 64 }).then((embedded) => ({ url: embedded.url, drop: () => embedded.stop() }));
  await run(process.execPath, ['-r', '@swc-node/register', 'src/database/migrate.cli.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: database.url, NODE_ENV: 'test' },
  });
  return database;
}
