/** True when PostgreSQL broke a deadlock by aborting this statement (40P01): it was rolled back whole. */
export function isDeadlock(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '40P01';
}

/** How many times a statement PostgreSQL aborted to break a deadlock is sent again. */
export const DEADLOCK_RETRIES = 3;

/**
 * Sends a statement that runs on its own (autocommit, not inside a transaction of ours) again when
 * PostgreSQL aborted it to break a deadlock: the statement was rolled back whole, so sending it
 * again is the same as sending it the first time. Single statements that lock rows of two tables
 * can meet in a deadlock: the provider-budget take did at the turn of a minute while it locked a
 * bucket per minute (3 pay-ins of 4,000, one customer, 20 at a time). It now locks one row per
 * budget in a fixed order (ADR 0009); this stays as the safety net for any statement of the kind.
 */
export async function retryingDeadlock<T>(send: () => Promise<T>, retries = DEADLOCK_RETRIES): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (!isDeadlock(error) || attempt >= retries) throw error;
    }
  }
}
