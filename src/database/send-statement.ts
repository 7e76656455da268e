import type { PoolClient, QueryResult, QueryResultRow } from 'pg';
import { endSpan, failureTypeOf, startStatementSpan } from '../tracing/tracing';
import type { SqlStatement, StatementRow } from './sql-statement';

/**
 * Sends a written-out statement on `client`, prepared as `preparedName` (undefined: unnamed, parsed
 * anew, as through a transaction-mode pooler), traced as a span of its own.
 *
 * Through pg's callback API, not its promise API. With the promise API (pg 8.23) the rows of
 * every result outlived their request: they survived young-generation collections until the next
 * full one (about 2 MB promoted per scavenge while serving pages of orders, each scavenge pausing
 * 5 to 10 ms: most of the lists' p99 then), where the callback API lets them die young.
 * test/perf/result-lifetime.perf-spec.ts measures it.
 */
export function sendStatement<S extends SqlStatement>(
  client: PoolClient,
  statement: S,
  values: unknown[],
  preparedName: string | undefined,
): Promise<{ rows: StatementRow<S>[]; count: number }> {
  type Row = StatementRow<S> & QueryResultRow;
  const span = startStatementSpan(statement.name, statement.text);
  return new Promise<{ rows: Row[]; count: number }>((resolve, reject) => {
    client.query<Row>({ name: preparedName, text: statement.text, values }, (error: Error | undefined, result: QueryResult<Row>) => {
      if (span) endSpan(span, {}, error && failureTypeOf(error));
      return error ? reject(error) : resolve({ rows: result.rows, count: result.rowCount ?? 0 });
    });
  });
}
