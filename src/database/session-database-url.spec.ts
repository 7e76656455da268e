import { migrationDatabaseUrl, sessionDatabaseUrl } from './session-database-url';

const DIRECT = 'postgresql://bff@db:5432/bff';
const POOLED = 'postgresql://bff@pooler:6432/bff?pgbouncer=true';

describe('the URL of the work that needs a session (LISTEN, migrations)', () => {
  it('is DATABASE_DIRECT_URL when set, pooled or not', () => {
    expect(sessionDatabaseUrl({ databaseUrl: POOLED, databaseDirectUrl: DIRECT, databasePooled: true })).toBe(DIRECT);
    expect(sessionDatabaseUrl({ databaseUrl: 'postgresql://bff@replica/bff', databaseDirectUrl: DIRECT, databasePooled: false })).toBe(
      DIRECT,
    );
  });

  it('is DATABASE_URL when that is not a pooler', () => {
    expect(sessionDatabaseUrl({ databaseUrl: DIRECT, databasePooled: false })).toBe(DIRECT);
    expect(migrationDatabaseUrl({ databaseUrl: DIRECT, databasePooled: false })).toBe(DIRECT);
  });

  it('is none through a pooler without a direct URL: nothing listens, and migrations refuse', () => {
    expect(sessionDatabaseUrl({ databaseUrl: POOLED, databasePooled: true })).toBeUndefined();
    expect(() => migrationDatabaseUrl({ databaseUrl: POOLED, databasePooled: true })).toThrow(/set DATABASE_DIRECT_URL/);
  });
});
