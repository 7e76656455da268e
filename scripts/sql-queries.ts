import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { registeredStatements, renderQueries, type SqlStatement } from '../src/database/sql-statement';

/** Tooling, not runtime code: it loads every file of src/ that writes out statements, so it lives outside src/. */
export const SRC_DIR = resolve(__dirname, '..', 'src');
export const QUERIES_DIR = join(SRC_DIR, 'queries');

/**
 * The files of src/ (relative, sorted) that declare written-out statements: every non-test file
 * calling `sqlStatement(`, or `registerOperationTable(` (which writes out an operation type's statements).
 */
export function statementModules(): string[] {
  return (readdirSync(SRC_DIR, { recursive: true }) as string[])
    .filter((path) => path.endsWith('.ts') && !path.endsWith('.spec.ts') && !path.startsWith('generated'))
    .filter(
      (path) =>
        !path.endsWith('sql-statement.ts') && /\b(sqlStatement|registerOperationTable)\(/.test(readFileSync(join(SRC_DIR, path), 'utf8')),
    )
    .sort();
}

/** Every statement of src/, its declaring files loaded so that they register. */
export function allStatements(): SqlStatement[] {
  // Discovered, not listed: a new repository's statements are listed without editing this file.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  for (const path of statementModules()) require(join(SRC_DIR, path));
  return registeredStatements();
}

/** The listing each repository's statements should have under src/queries/, by file name. */
export function committedQueryFiles(): Map<string, string> {
  const statements = allStatements();
  const repositories = [...new Set(statements.map((s) => s.repository))].sort();
  return new Map(repositories.map((repository) => [`${repository}.sql`, renderQueries(repository, statements)]));
}
