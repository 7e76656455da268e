import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { committedQueryFiles, QUERIES_DIR, SRC_DIR, STATEMENT_MODULES } from '../../scripts/sql-queries';

const STALE = 'src/queries is stale: run npm run sql:queries';

/** The committed SQL listings are the SQL the repositories send, statement for statement. */
describe('src/queries', () => {
  const expected = committedQueryFiles();

  it('covers every file of src/ that writes out statements', () => {
    const src = SRC_DIR;
    const declaring = (readdirSync(src, { recursive: true }) as string[])
      .filter((path) => /\.ts$/.test(path) && !/\.spec\.ts$/.test(path) && !path.startsWith('generated'))
      .filter((path) => !path.endsWith('sql-statement.ts') && readFileSync(join(src, path), 'utf8').includes('sqlStatement('))
      .map((path) => relative(src, join(src, path)))
      .sort();
    expect(declaring).toEqual([...STATEMENT_MODULES].sort());
  });

  it('lists the hot-path repositories', () => {
    expect([...expected.keys()]).toEqual(
      expect.arrayContaining(['orders.repository.sql', 'agent-budget.repository.sql', 'idempotency.repository.sql']),
    );
    expect(
      readdirSync(QUERIES_DIR)
        .filter((name) => name.endsWith('.sql'))
        .sort(),
    ).toEqual([...expected.keys()].sort());
  });

  it.each([...expected.entries()])('%s is up to date', (name, content) => {
    expect({ [STALE]: readFileSync(join(QUERIES_DIR, name), 'utf8') }).toEqual({ [STALE]: content });
  });
});
