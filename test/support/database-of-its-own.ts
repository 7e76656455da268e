import { copyOfTemplate } from './worker-database';

/**
 * A migrated database for one test file alone, beside its worker's: a copy of the run's migrated
 * template (a new database on TEST_DATABASE_URL's server, or an embedded PostgreSQL of its own).
 * For a file that must see only its own rows (a walkthrough whose lists and screenshots show what it
 * made, a command that goes over every row). `drop` removes it.
 */
export async function databaseOfItsOwn(name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  return copyOfTemplate(`${name}_${process.pid}_${Date.now()}`);
}
