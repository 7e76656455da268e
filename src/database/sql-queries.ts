import { join, resolve } from 'node:path';
import '../callbacks/callbacks.repository';
import './advisory-locks';
import './interrupted-work';
import '../health/health.repository';
import '../idempotency/idempotency.repository';
import '../orders/orders.statements';
import '../provider/agent-budget.repository';
import '../provider/provider-call.repository';
import '../provider/provider-token.repository';
import { registeredStatements, renderQueries } from './sql-statement';

const SRC_DIR = resolve(__dirname, '..');
export const QUERIES_DIR = join(SRC_DIR, 'queries');

/**
 * The files of src/ that declare written-out statements, imported above so that they register.
 * src/database/sql-queries.spec.ts fails when a file declaring statements is missing here.
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
