import { AGENT_API } from '../../src/provider/agent-budget-take';
import { CURRENT_MINUTE, usedAt } from '../../src/provider/agent-budget-window';

/** What runs raw SQL on the test database (a TestService's prisma). */
interface RawQueries {
  $queryRawUnsafe<T>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

/** The merchant-wide calls counted in the rolling hour now, as a take counts them. */
export async function merchantCount(db: RawQueries): Promise<number> {
  const rows = await db.$queryRawUnsafe<{ used: number }[]>(
    `SELECT ${usedAt('m', CURRENT_MINUTE)} AS used FROM agent_budgets m WHERE m.api = $1`,
    AGENT_API,
  );
  return rows[0]?.used ?? 0;
}

/** A customer's calls counted in the rolling hour now, as a take counts them. */
export async function customerCount(db: RawQueries, subject: string): Promise<number> {
  const rows = await db.$queryRawUnsafe<{ used: number }[]>(
    `SELECT ${usedAt('c', CURRENT_MINUTE)} AS used FROM customer_budgets c WHERE c.subject = $1`,
    subject,
  );
  return rows[0]?.used ?? 0;
}

/**
 * Sets a budget's row as if `calls[i]` calls had been taken `minutesAgo[i]` minutes ago (whole
 * minutes before the current one): the totals the takes would have left.
 */
export async function setBudgetRow(
  db: RawQueries,
  row: { merchant: true } | { customer: string },
  calls: { minutesAgo: number; calls: number }[],
): Promise<void> {
  const newest = Math.min(...calls.map((c) => c.minutesAgo));
  // totals[k]: the calls taken by the end of minute newest + k - 1 minutes ago.
  const totals = Array.from({ length: 62 }, (_, k) => calls.filter((c) => c.minutesAgo >= newest + k).reduce((sum, c) => sum + c.calls, 0));
  const [table, key, value] = 'merchant' in row ? ['agent_budgets', 'api', AGENT_API] : ['customer_budgets', 'subject', row.customer];
  await db.$executeRawUnsafe(
    `INSERT INTO ${table} (${key}, minute, totals) VALUES ($1, ${CURRENT_MINUTE} - $2::int, $3::int[])
     ON CONFLICT (${key}) DO UPDATE SET minute = EXCLUDED.minute, totals = EXCLUDED.totals`,
    value,
    newest,
    totals,
  );
}

/** Empties both budgets (and the customers' overrides when asked). */
export async function emptyBudgets(db: RawQueries): Promise<void> {
  await db.$executeRawUnsafe('DELETE FROM agent_budgets');
  await db.$executeRawUnsafe('DELETE FROM customer_budgets');
}
