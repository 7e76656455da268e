import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DIST_LOCK, withRunLock } from './run-lock';
import { runDirectory } from './test-database';

const ROOT = resolve(__dirname, '../..');

/**
 * `npm run build` of this checkout, once per jest run: the files that serve the production bundle
 * share it (a build is about 15 s of CPU on a 2-core machine, 20 to 50 s of wall time beside another
 * worker). The first caller builds under the run's lock on `dist/` (which `nest start` in another
 * worker compiles into) and leaves a mark in the run's directory; the next finds the mark and
 * builds nothing. A build that failed leaves no mark: the next caller builds again, and fails alike.
 */
export async function buildOncePerRun(): Promise<void> {
  const mark = join(runDirectory(), 'production-build.done');
  await withRunLock(DIST_LOCK, async () => {
    if (existsSync(mark)) return;
    await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 });
    writeFileSync(mark, new Date().toISOString());
  });
}
