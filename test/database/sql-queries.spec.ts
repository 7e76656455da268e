import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { committedQueryFiles, QUERIES_DIR } from '../../scripts/sql-queries';

const STALE = 'src/queries is stale: run npm run sql:queries';

/** The committed SQL listings are the SQL the repositories send, statement for statement. */
describe('src/queries', () => {
  const expected = committedQueryFiles();

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
