import type { PoolClient } from 'pg';
import { currentRequestId } from '../logging/request-context';

/** Told of every statement sent to the database, with the id of the request that sent it (when one did). */
export type StatementListener = (sql: string, requestId: string | undefined) => void;

/** Makes `client` tell `listeners` of each statement it sends; nothing is done while none listens. */
export function reportStatementsTo(client: PoolClient, listeners: ReadonlySet<StatementListener>): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    if (listeners.size) {
      const sql = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown } | undefined)?.text);
      for (const listener of listeners) listener(sql, currentRequestId());
    }
    return query(...args);
  };
}
