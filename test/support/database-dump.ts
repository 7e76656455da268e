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
    const quoted = `"${name.replace(/"/g, '""')}"`;
    const label = name.replace(/'/g, "''");
    // One text per table, joined by the server, not a row each through Prisma: a worker's database
    // holds every row its earlier files left, tens of thousands late in a run.
    const [{ rows }] = await service.prisma.$queryRawUnsafe<{ rows: string | null }[]>(
      `SELECT string_agg('${label}: ' || row_to_json(t)::text, E'\n') AS rows FROM ${quoted} t`,
    );
    lines.push(`-- ${name}`);
    if (rows !== null) lines.push(rows);
  }
  return lines.join('\n');
}
