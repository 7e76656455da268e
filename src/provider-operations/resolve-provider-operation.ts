import { appendAuditEvent } from '../audit/audit.repository';
import type { NewAuditEvent } from '../audit/audit.types';
import type { Database, TransactionRun } from '../database/database';
import type { OperationTable } from './operation-tables';

/** A person's decision on an UNKNOWN operation, after checking with the provider. */
export interface ManualDecision<Decided extends string> {
  status: Decided;
  actor: string;
  note: string;
}

/**
 * A person decides an UNKNOWN operation. Guarded (only UNKNOWN moves), so that two decisions never
 * both apply; what the decision changes elsewhere (`alsoWrite`, e.g. a card's status) and the audit
 * event (with `fromStatus` and `toStatus` in its details) commit in the same transaction. False
 * when the operation was not UNKNOWN (any more): nothing was written.
 */
export async function resolveProviderOperation<Decided extends string>(
  database: Database,
  table: OperationTable<string, Decided>,
  id: string,
  decision: ManualDecision<Decided>,
  audit: NewAuditEvent,
  alsoWrite?: (run: TransactionRun) => Promise<void>,
): Promise<boolean> {
  const [done, notDone] = table.resolution.outcomes;
  if (decision.status !== done && decision.status !== notDone) throw new Error(`${decision.status} is no manual outcome of ${table.table}`);
  const resolve = table.resolve;
  if (!resolve) throw new Error(`${table.table} writes its decisions itself (ownSweepAndResolution)`);
  const failureReason =
    decision.status === notDone ? `Decided ${notDone} by a person after checking with the provider (manual resolution)` : null;
  return database.inTransaction(async (run) => {
    const moved = await run(resolve, [id, decision.status, failureReason, decision.actor, decision.note]);
    if (moved.count === 0) return false;
    await alsoWrite?.(run);
    await appendAuditEvent(run, { ...audit, details: { ...audit.details, fromStatus: 'UNKNOWN', toStatus: decision.status } });
    return true;
  });
}
