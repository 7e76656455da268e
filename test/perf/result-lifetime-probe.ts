/**
 * Run by result-lifetime.perf-spec.ts in a process of its own (node --expose-gc): V8's promotion
 * heuristics depend on what a process ran before, and jest runs every spec file in one. Sends a
 * page-sized statement through `Database.run` a hundred times, with young-generation
 * collections in between, and prints how many bytes the old generation grew by.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { ConfigService } from '@nestjs/config';
import { loadAppConfig } from '../../src/config/app-config';
import { Database } from '../../src/database/database';
import { column, sqlStatement } from '../../src/database/sql-statement';

const gc = (globalThis as { gc?: (options?: { type: 'major' | 'minor' }) => void }).gc;
const oldSpaceUsed = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;

/** About a page of orders: 50 rows of some 700 bytes of text each. */
const PAGE_LIKE = sqlStatement(
  'test',
  'test',
  'test_result_lifetime',
  `SELECT i, repeat(md5(i::text), 10) AS a, repeat(md5((i + 1)::text), 10) AS b FROM generate_series(1, 50) AS i`,
  { i: column.int4, a: column.text, b: column.text },
);

async function main() {
  if (!gc) throw new Error('run with --expose-gc');
  const prisma = new Database(new ConfigService(loadAppConfig({ NODE_ENV: 'test', DATABASE_URL: process.env.DATABASE_URL })));
  let rows = 0;
  const runMany = async (times: number) => {
    for (let i = 0; i < times; i++) rows += (await prisma.run(PAGE_LIKE, [])).length;
  };
  await runMany(20);
  gc({ type: 'major' });
  gc({ type: 'minor' });
  const before = oldSpaceUsed();
  for (let round = 0; round < 5; round++) {
    await runMany(20);
    gc({ type: 'minor' });
  }
  gc({ type: 'minor' });
  const promoted = oldSpaceUsed() - before;
  await prisma.onApplicationShutdown();
  process.stdout.write(`${JSON.stringify({ rows, promoted })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error instanceof Error ? error.stack : error)}\n`);
  process.exit(1);
});
