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
 * can meet in a deadlock, for instance the provider-budget take at the turn of a minute, where two
 * takers hold and wait for the buckets of two minutes (3 pay-ins of 4,000, one customer, 20 at a time).
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
