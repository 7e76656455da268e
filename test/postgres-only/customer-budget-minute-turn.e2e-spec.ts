import { Client } from 'pg';
import { agentBudgetTakeCte, budgetSlotValues } from '../../src/provider/agent-budget-take';
import { testDatabaseUrl } from '../support/test-database';

const TAKERS = 24;
const CUSTOMER_LIMIT = 15;

/** Milliseconds until the database clock's next minute starts. */
async function untilNextMinute(db: Client): Promise<number> {
  const { rows } = await db.query<{ ms: number }>(
    `SELECT (EXTRACT(EPOCH FROM date_trunc('minute', clock_timestamp()) + interval '1 minute' - clock_timestamp()) * 1000)::float8 AS ms`,
  );
  return rows[0].ms;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * Many takers of one customer's share at the turn of a minute, half of them in transactions begun
 * in the minute before (their now() is there) and half in the new minute, all taking at once: the
 * minute buckets this replaced deadlocked here (two takers locking the buckets of two minutes in
 * different orders; 3 of 4,000 pay-ins in CI). Each take locks the merchant's row, then the
 * customer's: none is aborted, and the customer's share is exact across the turn. Runs only on a
 * real PostgreSQL server (jest.config.js): PGlite is a single session. Waits for the database
 * clock's next minute (up to a minute).
 */
describe("a customer's share at the turn of a minute", () => {
  const sessions: Client[] = [];
  let admin: Client;
  const customer = `turn_${Date.now()}`;

  beforeAll(async () => {
    admin = new Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    for (let i = 0; i < TAKERS; i++) {
      const session = new Client({ connectionString: testDatabaseUrl() });
      await session.connect();
      sessions.push(session);
    }
  });
  afterAll(async () => {
    await Promise.all([admin, ...sessions].map((session) => session.end()));
  });

  it('takers of both minutes at once: no deadlock, exactly the share granted and counted', async () => {
    const take = (session: Client) =>
      session.query<{ granted: boolean }>(
        `WITH ${agentBudgetTakeCte(1)} SELECT EXISTS (SELECT 1 FROM budget) AS granted FROM budget_share`,
        budgetSlotValues({ hourlyLimit: 1_000_000, customer, customerHourlyLimit: CUSTOMER_LIMIT }),
      );
    const [before, after] = [sessions.slice(0, TAKERS / 2), sessions.slice(TAKERS / 2)];

    // The first half's transactions begin (and fix their now()) in the last 300 ms of a minute.
    await sleep((await untilNextMinute(admin)) - 300);
    await Promise.all(before.map((session) => session.query('BEGIN')));
    const turn = await untilNextMinute(admin);
    expect(turn).toBeLessThan(300);
    await sleep(turn + 50);
    await Promise.all(after.map((session) => session.query('BEGIN')));

    const minutes = await Promise.all(
      sessions.map(
        async (session) => (await session.query<{ minute: string }>(`SELECT date_trunc('minute', now())::text AS minute`)).rows[0].minute,
      ),
    );
    expect(new Set(minutes).size).toBe(2);

    // Every taker at once, each committing as soon as its take answers.
    const outcomes = await Promise.allSettled(
      sessions.map(async (session) => {
        const { rows } = await take(session);
        await session.query('COMMIT');
        return rows[0].granted;
      }),
    );
    const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
    expect(failures).toEqual([]);
    const granted = outcomes.filter((outcome) => outcome.status === 'fulfilled' && outcome.value).length;
    expect(granted).toBe(CUSTOMER_LIMIT);

    const counted = await admin.query<{ used: number }>(
      `SELECT (c.totals[1] - c.totals[62]) AS used FROM customer_budgets c WHERE c.subject = $1`,
      [customer],
    );
    expect(counted.rows[0].used).toBe(CUSTOMER_LIMIT);
  }, 120_000);
});
