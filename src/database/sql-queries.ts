import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { registeredStatements, renderQueries } from './sql-statement';

const SRC_DIR = resolve(__dirname, '..');
export const QUERIES_DIR = join(SRC_DIR, 'queries');

/** Every file of src/ that declares written-out statements (`sqlStatement(`), loaded so that they register. */
function loadStatementModules(dir = SRC_DIR): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'generated' && entry.name !== 'queries') loadStatementModules(path);
    } else if (/\.ts$/.test(entry.name) && !/\.(spec|d)\.ts$/.test(entry.name) && entry.name !== 'sql-statement.ts') {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded for its registrations only
      if (readFileSync(path, 'utf8').includes('sqlStatement(')) require(path);
    }
  }
}

/** The listing each repository's statements should have under src/queries/, by file name. */
export function committedQueryFiles(): Map<string, string> {
  loadStatementModules();
  const statements = registeredStatements();
  const repositories = [...new Set(statements.map((s) => s.repository))].sort();
  return new Map(repositories.map((repository) => [`${repository}.sql`, renderQueries(repository, statements)]));
}
