/**
 * Every advisory lock key of the service, in one place so that two features never share one.
 * All are taken transaction-scoped (pg_advisory_xact_lock / pg_try_advisory_xact_lock). 7_340_001 was the
 * agent budget's, which is now one statement without a lock: never reuse it.
 */
export const ADVISORY_LOCKS = {
  orderSweep: 7_340_002,
  idempotencyPurge: 7_340_003,
  rejectedCallbackPurge: 7_340_021,
} as const;
