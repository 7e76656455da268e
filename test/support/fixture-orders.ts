import type { Prisma } from '../../src/generated/prisma/client';
import type { Database } from '../../src/database/database';

/**
 * Runs `insert`, a bulk insert of orders that stand for old ones (thousands, by `generate_series`),
 * with the events trigger off for its transaction (`session_replication_role = replica`): an order
 * inserted so would otherwise record an event each, and a webhook delivery per endpoint that earlier
 * files of the worker left enabled. Deleting the orders afterwards left those behind, so every later
 * file of the worker polled and dumped tens of thousands of rows. The test database's user is a
 * superuser on both databases (PGlite's, and CI's postgres), which the setting requires.
 */
export async function insertFixtureOrders(database: Database, insert: Prisma.PrismaPromise<number>): Promise<void> {
  await database.$transaction([database.$executeRaw`SET LOCAL session_replication_role = replica`, insert]);
}
