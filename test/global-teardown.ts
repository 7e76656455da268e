import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { RUN_DIRECTORY_ENV } from './support/test-database';
import { dropRunDatabase } from './support/test-database-server';
import type { WorkerDatabaseRecord } from './support/worker-database';

/** Ends the workers' embedded databases, drops their copies and the template, removes the run's directory. */
export default async function globalTeardown() {
  const directory = process.env[RUN_DIRECTORY_ENV];
  const records = directory && existsSync(directory) ? readdirSync(directory).filter((name) => /^worker-\d+\.json$/.test(name)) : [];
  for (const name of records) {
    const record = JSON.parse(readFileSync(`${directory}/${name}`, 'utf8')) as WorkerDatabaseRecord;
    if (record.pid) killQuietly(record.pid);
    if (record.database) await dropRunDatabase(process.env.TEST_DATABASE_URL!, record.database);
  }
  const dropTemplate = (globalThis as Record<string, unknown>).__BFF_TEST_DROP__ as (() => Promise<void>) | undefined;
  await dropTemplate?.();
  if (directory) rmSync(directory, { recursive: true, force: true });
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // already gone
  }
}
