import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import {
  EFFECTIVE_DATABASE_URL_ENV,
  RUN_PID_ENV,
  runDirectory,
  TEMPLATE_DATABASE_URL_ENV,
  TEMPLATE_DUMP_FILE,
  usingRealPostgres,
} from './test-database';
import { createRunDatabase } from './test-database-server';

const ROOT = resolve(__dirname, '../..');

/** How long a worker waits for its embedded database to load the template. */
const EMBEDDED_START_TIMEOUT_MS = 120_000;

/** A worker's database, as the run's directory records it for the next files and global teardown. */
export interface WorkerDatabaseRecord {
  url: string;
  /** TEST_DATABASE_URL set: the copy's name, dropped at the end. */
  database?: string;
  /** Otherwise: the process serving the worker's PGlite, ended at the end. */
  pid?: number;
}

/** The file of the run's directory where worker `id` records its database. */
export const workerRecordFile = (directory: string, id: string) => join(directory, `worker-${id}.json`);

/**
 * Points `testDatabaseUrl()` at the worker's own copy of the run's template, made by the worker's
 * first file (JEST_WORKER_ID; 1 in band): before each test file (worker-database.setup.ts). Files
 * of one worker run one after the other on it, as all files did on the one database of a
 * `--runInBand` run; files of different workers never share rows.
 */
export async function useWorkerDatabase(): Promise<void> {
  const id = process.env.JEST_WORKER_ID ?? '1';
  const file = workerRecordFile(runDirectory(), id);
  if (!existsSync(file)) writeFileSync(file, JSON.stringify(await createWorkerDatabase(id)));
  process.env[EFFECTIVE_DATABASE_URL_ENV] = (JSON.parse(readFileSync(file, 'utf8')) as WorkerDatabaseRecord).url;
}

async function createWorkerDatabase(id: string): Promise<WorkerDatabaseRecord> {
  if (usingRealPostgres()) {
    const database = `${templateName()}_w${id}`;
    const { url } = await createRunDatabase(process.env.TEST_DATABASE_URL!, database, templateName());
    return { url, database };
  }
  return startEmbeddedDatabaseProcess(id);
}

/**
 * A migrated database for one test file alone, beside its worker's: a copy of the run's template,
 * on TEST_DATABASE_URL's server or in an embedded PostgreSQL of its own in this process. `drop`
 * removes it.
 */
export async function copyOfTemplate(name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (usingRealPostgres()) return createRunDatabase(process.env.TEST_DATABASE_URL!, name, templateName());
  const embedded = await startEmbeddedPostgres({ fromDump: templateDump(), maxConnections: 64 });
  return { url: embedded.url, drop: () => embedded.stop() };
}

function templateName(): string {
  const url = process.env[TEMPLATE_DATABASE_URL_ENV];
  if (!url) throw new Error('the jest global setup did not prepare a template database');
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

function templateDump(): Blob {
  return new Blob([readFileSync(join(runDirectory(), TEMPLATE_DUMP_FILE))]);
}

/**
 * The worker's PGlite in a process of its own (test/support/embedded-database.process.ts): it
 * outlives the test files (each has a module registry of its own) and the worker (jest may restart
 * one), runs beside the worker on the other core, and ends with the run's jest process.
 */
async function startEmbeddedDatabaseProcess(id: string): Promise<WorkerDatabaseRecord> {
  const logFile = join(runDirectory(), `worker-${id}-database.log`);
  const log = openSync(logFile, 'a');
  const child = spawn(
    process.execPath,
    [
      '-r',
      '@swc-node/register',
      resolve(__dirname, 'embedded-database.process.ts'),
      join(runDirectory(), TEMPLATE_DUMP_FILE),
      process.env[RUN_PID_ENV] ?? String(process.pid),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', log], env: process.env },
  );
  closeSync(log);
  try {
    const url = await new Promise<string>((resolveUrl, reject) => {
      let output = '';
      const failed = (reason: string) => () =>
        reject(new Error(`worker ${id}'s embedded database ${reason}: ${readFileSync(logFile, 'utf8')}`));
      const timer = setTimeout(failed(`did not start within ${EMBEDDED_START_TIMEOUT_MS / 1000} s`), EMBEDDED_START_TIMEOUT_MS);
      child.once('exit', failed('ended before it was ready'));
      child.once('error', reject);
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (!output.includes('\n')) return;
        clearTimeout(timer);
        resolveUrl(output.split('\n')[0]);
      });
    });
    return { url, pid: child.pid! };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    child.removeAllListeners('exit');
    child.stdout!.destroy();
    child.unref();
  }
}
