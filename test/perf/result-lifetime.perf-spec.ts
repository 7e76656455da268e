import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { testDatabaseUrl } from '../support/test-database';

/**
 * The rows of a statement sent through `Database.run` die young once the caller drops them.
 * Through pg's promise API they did not: each result survived the young-generation collections
 * after it (about 35 KB per result here, 4 MB over the probe's hundred) until the next full
 * collection, which made every scavenge copy megabytes and pause 5 to 10 ms while lists were
 * served. Measured in a fresh process (result-lifetime-probe.ts).
 */
describe('the lifetime of statement results', () => {
  it('does not promote the rows of finished statements to the old generation', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '-r', '@swc-node/register', resolve(__dirname, 'result-lifetime-probe.ts')],
      { cwd: resolve(__dirname, '../..'), env: { ...process.env, DATABASE_URL: testDatabaseUrl() }, timeout: 60_000 },
    );
    const { rows, promoted } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { rows: number; promoted: number };
    expect(rows).toBe(120 * 50);
    // 100 results of about 35 KB each: promoted, they would be 3 MB or more.
    expect(promoted).toBeLessThan(1024 * 1024);
  });
});
