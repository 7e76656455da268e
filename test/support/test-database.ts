/**
 * Where the tests' database lives. Global setup decides once per run: a fresh database on the
 * PostgreSQL server named by TEST_DATABASE_URL, or the embedded PGlite when it is not set.
 */
export const EFFECTIVE_DATABASE_URL_ENV = 'BFF_TEST_EFFECTIVE_DATABASE_URL';

export function testDatabaseUrl(): string {
  const url = process.env[EFFECTIVE_DATABASE_URL_ENV];
  if (!url) throw new Error('the jest global setup did not prepare a database');
  return url;
}

/** True when the tests run against a real PostgreSQL server rather than the embedded one. */
export const usingRealPostgres = () => Boolean(process.env.TEST_DATABASE_URL);
