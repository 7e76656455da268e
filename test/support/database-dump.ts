import { execFileSync } from 'node:child_process';
import { ProviderCallLog } from '../../src/provider/provider-call-log';
import { testDatabaseUrl, usingRealPostgres } from './test-database';
import type { TestService } from './test-service';

/**
 * Every row of every table as text, for tests that prove a value is stored nowhere: `pg_dump` on
 * a real server (what an attacker holding a dump reads), one JSON line per row through SQL on
 * PGlite. The provider call log is written in batches: flushed first, so its rows are in.
 */
export async function databaseDump(service: TestService): Promise<string> {
  await service.get(ProviderCallLog).flush();
  if (usingRealPostgres()) {
    return execFileSync('pg_dump', ['--data-only', '--no-owner', testDatabaseUrl()], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  }
  const tables = await service.prisma.$queryRaw<{ name: string }[]>`
    SELECT table_name::text AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`;
  const lines: string[] = [];
  for (const { name } of tables) {
    const rows = await service.prisma.$queryRawUnsafe<{ row: string }[]>(
      `SELECT row_to_json(t)::text AS row FROM "${name.replace(/"/g, '""')}" t`,
    );
    // One push per row: a spread of a large table's rows overflowed the call stack (RangeError).
    lines.push(`-- ${name}`);
    for (const { row } of rows) lines.push(`${name}: ${row}`);
  }
  return lines.join('\n');
}
