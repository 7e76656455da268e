import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runDirectory } from './test-database';

/**
 * A lock the jest workers of one run share, for the few files that share something other than the
 * database: `dist/`, which `npm run build` rewrites while `nest start` compiles into it and runs
 * from it. `mkdir` either makes the lock directory or fails because another worker holds it.
 */
export async function withRunLock<T>(name: string, work: () => Promise<T>, timeoutMs = 300_000): Promise<T> {
  const lock = join(runDirectory(), `${name}.lock`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
      if (Date.now() > deadline)
        throw new Error(`another test file held the run's ${name} lock for over ${timeoutMs / 1000} s`, { cause: error });
      await sleep(250);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The name of the lock on `dist/`: held while a file builds into it or starts the service from it. */
export const DIST_LOCK = 'dist';
