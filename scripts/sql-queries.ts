import { join, resolve } from 'node:path';
import '../src/callbacks/callbacks.repository';
import '../src/database/advisory-locks';
import '../src/database/interrupted-work';
import '../src/health/health.repository';
import '../src/idempotency/idempotency.repository';
import '../src/orders/orders.statements';
import '../src/provider/agent-budget.repository';
import '../src/provider/provider-call.repository';
import '../src/provider/provider-token.repository';
import { registeredStatements, renderQueries } from '../src/database/sql-statement';

/** Tooling, not runtime code: it imports every area that writes out statements, so it lives outside src/. */
export const SRC_DIR = resolve(__dirname, '..', 'src');
export const QUERIES_DIR = join(SRC_DIR, 'queries');

/**
 * The files of src/ that declare written-out statements, imported above so that they register.
 * test/database/sql-queries.spec.ts fails when a file declaring statements is missing here.
 */
export const STATEMENT_MODULES = [
  'callbacks/callbacks.repository.ts',
  'database/advisory-locks.ts',
  'database/interrupted-work.ts',
  'health/health.repository.ts',
  'idempotency/idempotency.repository.ts',
  'orders/orders.statements.ts',
  'provider/agent-budget.repository.ts',
  'provider/provider-call.repository.ts',
  'provider/provider-token.repository.ts',
];

/** The listing each repository's statements should have under src/queries/, by file name. */
export function committedQueryFiles(): Map<string, string> {
  const statements = registeredStatements();
  const repositories = [...new Set(statements.map((s) => s.repository))].sort();
  return new Map(repositories.map((repository) => [`${repository}.sql`, renderQueries(repository, statements)]));
}
