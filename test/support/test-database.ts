/**
 * Where the tests' database lives. Global setup migrates one template per run (a database on the
 * PostgreSQL server named by TEST_DATABASE_URL, or a dump of an embedded PGlite's data directory
 * when it is not set); each jest worker then gets a copy of its own (test/support/worker-database.ts),
 * whose URL it sets here before each test file runs.
 */
export const EFFECTIVE_DATABASE_URL_ENV = 'BFF_TEST_EFFECTIVE_DATABASE_URL';

/** The run's directory (the template dump, one line per worker database): made by global setup. */
export const RUN_DIRECTORY_ENV = 'BFF_TEST_RUN_DIRECTORY';

/** The jest process of the run: the embedded databases of the workers end with it. */
export const RUN_PID_ENV = 'BFF_TEST_RUN_PID';

/** TEST_DATABASE_URL set: the URL of the run's migrated template database, which nothing connects to. */
export const TEMPLATE_DATABASE_URL_ENV = 'BFF_TEST_TEMPLATE_DATABASE_URL';

/** TEST_DATABASE_URL unset: the migrated PGlite data directory, as `dumpDataDir` writes it, in the run's directory. */
export const TEMPLATE_DUMP_FILE = 'template-pgdata.tar';

export function testDatabaseUrl(): string {
  const url = process.env[EFFECTIVE_DATABASE_URL_ENV];
  if (!url) throw new Error('the jest global setup did not prepare a database');
  return url;
}

/** The run's directory, made by the jest global setup. */
export function runDirectory(): string {
  const directory = process.env[RUN_DIRECTORY_ENV];
  if (!directory) throw new Error('the jest global setup did not prepare a database');
  return directory;
}

/** True when the tests run against a real PostgreSQL server rather than the embedded one. */
export const usingRealPostgres = () => Boolean(process.env.TEST_DATABASE_URL);
