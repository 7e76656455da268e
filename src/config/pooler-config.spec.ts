import { loadAppConfig } from './app-config';
import { PRODUCTION_ENV as PRODUCTION_WITHOUT_POOLER, problemsOf } from './app-config.spec-support';

const PRODUCTION_ENV = {
  ...PRODUCTION_WITHOUT_POOLER,
  DATABASE_URL: 'postgresql://bff@pooler.internal:6432/bff?pgbouncer=true',
  DATABASE_DIRECT_URL: 'postgresql://bff@db.internal:5432/bff',
};

describe('loadAppConfig: a database behind a transaction-mode pooler', () => {
  it('reads pgbouncer=true on DATABASE_URL as a pooler, and DATABASE_DIRECT_URL beside it', () => {
    expect(loadAppConfig(PRODUCTION_ENV)).toMatchObject({
      databaseUrl: 'postgresql://bff@pooler.internal:6432/bff?pgbouncer=true',
      databaseDirectUrl: 'postgresql://bff@db.internal:5432/bff',
      databasePooled: true,
    });
    expect(loadAppConfig({ DATABASE_URL: 'postgresql://bff@db:5432/bff' })).toMatchObject({
      databasePooled: false,
      databaseDirectUrl: undefined,
    });
    expect(loadAppConfig({ DATABASE_URL: 'postgresql://bff@db:5432/bff?pgbouncer=false' }).databasePooled).toBe(false);
    expect(loadAppConfig({}).databasePooled).toBe(false);
  });

  it('refuses a pooled DATABASE_URL without DATABASE_DIRECT_URL in production, and accepts it in development', () => {
    expect(problemsOf({ ...PRODUCTION_ENV, DATABASE_DIRECT_URL: undefined })).toEqual([
      expect.stringMatching(/^DATABASE_DIRECT_URL is required in production when DATABASE_URL goes through a pooler \(pgbouncer=true\)/),
    ]);
    expect(
      problemsOf({ ...PRODUCTION_ENV, DATABASE_URL: 'postgresql://bff@db.internal:5432/bff', DATABASE_DIRECT_URL: undefined }),
    ).toEqual([]);
    expect(loadAppConfig({ DATABASE_URL: PRODUCTION_ENV.DATABASE_URL })).toMatchObject({
      databasePooled: true,
      databaseDirectUrl: undefined,
    });
  });

  it('refuses session settings carried by a pooled URL, which the pooler would refuse or leak to other clients', () => {
    const url = 'postgresql://bff@pooler:6432/bff?pgbouncer=true&options=-c%20search_path%3Dx&statement_timeout=5000';
    expect(problemsOf({ ...PRODUCTION_ENV, DATABASE_URL: url })).toEqual([
      expect.stringContaining('cannot carry session settings (options, statement_timeout)'),
    ]);
    // Straight to PostgreSQL they are the server's to apply.
    expect(problemsOf({ ...PRODUCTION_ENV, DATABASE_URL: url.replace('pgbouncer=true&', '') })).toEqual([]);
  });

  it('refuses a malformed pgbouncer flag, a direct URL that is not PostgreSQL or is itself pooled, or one without DATABASE_URL', () => {
    expect(problemsOf({ DATABASE_URL: 'postgresql://bff@db/bff?pgbouncer=yes' })).toEqual([
      `DATABASE_URL's pgbouncer parameter must be true or false (got "yes")`,
    ]);
    expect(problemsOf({ ...PRODUCTION_ENV, DATABASE_DIRECT_URL: 'https://db.internal' })).toEqual([
      'DATABASE_DIRECT_URL must be a postgres:// or postgresql:// URL',
    ]);
    expect(problemsOf({ ...PRODUCTION_ENV, DATABASE_DIRECT_URL: PRODUCTION_ENV.DATABASE_URL })).toEqual([
      'DATABASE_DIRECT_URL must reach PostgreSQL itself, not a pooler (it carries pgbouncer=true)',
    ]);
    expect(problemsOf({ DATABASE_DIRECT_URL: 'postgresql://bff@db/bff' })).toEqual([
      'DATABASE_DIRECT_URL is only used with DATABASE_URL (without it the embedded database is used)',
    ]);
  });
});
