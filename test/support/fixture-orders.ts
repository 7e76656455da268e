import type { Database } from '../../src/database/database';
import type { Prisma } from '../../src/generated/prisma/client';

/**
 * Runs `insert`, a bulk insert of orders that stand for old ones (thousands, by `generate_series`),
 * with the events trigger off for its transaction (`session_replication_role = replica`): an order
 * inserted so would otherwise record an event each, and a webhook delivery per endpoint that earlier
 * files of the worker left enabled. Deleting the orders afterwards left those behind, so every later
 * file of the worker polled and dumped tens of thousands of rows. The test database's user is a
 * superuser on both databases (PGlite's, and CI's postgres), which the setting requires.
 */
export async function insertFixtureOrders(database: Database, insert: (tx: Prisma.TransactionClient) => Promise<number>): Promise<void> {
  await database.$transaction(
    async (tx) => {
      await tx.$executeRaw`SET LOCAL session_replication_role = replica`;
      await insert(tx);
    },
    // Not Prisma's 5 s: 60,000 rows take longer on PGlite beside another worker. Its duration is not under test.
    { timeout: 120_000 },
  );
}
