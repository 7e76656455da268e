import type { TransactionRun } from './database';
import { column, sqlStatement } from './sql-statement';

/**
 * Every advisory lock key of the service, in one place so that two features never share one.
 * All are taken transaction-scoped (pg_advisory_xact_lock / pg_try_advisory_xact_lock). 7_340_001 was the
 * agent budget's, which is now one statement without a lock: never reuse it.
 */
export const ADVISORY_LOCKS = {
  orderSweep: 7_340_002,
  idempotencyPurge: 7_340_003,
  rejectedCallbackPurge: 7_340_021,
  dataRetention: 7_340_031,
} as const;

/** Read as text: never depends on how a driver maps booleans. */
const TRY_TRANSACTION_LOCK = sqlStatement(
  'advisory-locks',
  'tryTransactionLock',
  'advisory_try_xact_lock',
  `
  SELECT pg_try_advisory_xact_lock($1::bigint)::text AS locked`,
  { locked: column.text },
);

/**
 * Takes `lock` for the rest of the transaction `run` belongs to, without waiting: false when
 * another session (another instance) holds it.
 */
export async function tryTransactionLock(
  run: TransactionRun,
  lock: (typeof ADVISORY_LOCKS)[keyof typeof ADVISORY_LOCKS],
): Promise<boolean> {
  const { rows } = await run(TRY_TRANSACTION_LOCK, [lock]);
  return rows[0]?.locked === 'true';
}
