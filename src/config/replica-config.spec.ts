import { loadAppConfig } from './app-config';
import { PRODUCTION_ENV, problemsOf } from './app-config.spec-support';

const REPLICA_URL = 'postgresql://finance_reader@db-standby.internal:5432/bff';

describe('loadAppConfig: the finance reads replica', () => {
  it('has none by default: every read on the primary', () => {
    expect(loadAppConfig(PRODUCTION_ENV).databaseReplica).toBeUndefined();
    expect(loadAppConfig({}).databaseReplica).toBeUndefined();
    // The bound alone changes nothing.
    expect(loadAppConfig({ ...PRODUCTION_ENV, DATABASE_REPLICA_MAX_LAG_SECONDS: '30' }).databaseReplica).toBeUndefined();
  });

  it('reads DATABASE_REPLICA_URL with a lag bound of 5 s unless DATABASE_REPLICA_MAX_LAG_SECONDS says otherwise', () => {
    expect(loadAppConfig({ ...PRODUCTION_ENV, DATABASE_REPLICA_URL: REPLICA_URL }).databaseReplica).toEqual({
      url: REPLICA_URL,
      maxLagSeconds: 5,
      pooled: false,
    });
    const pooled = `${REPLICA_URL}?pgbouncer=true`;
    expect(
      loadAppConfig({ ...PRODUCTION_ENV, DATABASE_REPLICA_URL: pooled, DATABASE_REPLICA_MAX_LAG_SECONDS: '30' }).databaseReplica,
    ).toEqual({ url: pooled, maxLagSeconds: 30, pooled: true });
  });

  it('refuses a replica that cannot be one, with every problem named', () => {
    expect(problemsOf({ ...PRODUCTION_ENV, DATABASE_REPLICA_URL: 'https://db-standby.internal' })).toEqual([
      'DATABASE_REPLICA_URL must be a postgres:// or postgresql:// URL',
    ]);
    expect(problemsOf({ DATABASE_REPLICA_URL: REPLICA_URL })).toEqual([
      'DATABASE_REPLICA_URL is only used with DATABASE_URL (without it the embedded database is used)',
    ]);
    expect(problemsOf({ ...PRODUCTION_ENV, DATABASE_REPLICA_URL: PRODUCTION_ENV.DATABASE_URL })).toEqual([
      'DATABASE_REPLICA_URL must reach a standby, not the primary of DATABASE_URL',
    ]);
    expect(problemsOf({ ...PRODUCTION_ENV, DATABASE_REPLICA_URL: `${REPLICA_URL}?pgbouncer=yes` })).toEqual([
      'DATABASE_REPLICA_URL\'s pgbouncer parameter must be true or false (got "yes")',
    ]);
    for (const bound of ['0', '-1', '2.5', 'soon', '3601'])
      expect(problemsOf({ ...PRODUCTION_ENV, DATABASE_REPLICA_URL: REPLICA_URL, DATABASE_REPLICA_MAX_LAG_SECONDS: bound })).toEqual([
        `DATABASE_REPLICA_MAX_LAG_SECONDS must be an integer between 1 and 3600 (got "${bound}")`,
      ]);
  });
});
