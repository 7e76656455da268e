/**
 * DATABASE_REPLICA_URL and DATABASE_REPLICA_MAX_LAG_SECONDS: a PostgreSQL streaming standby that
 * serves the finance and reporting reads while it is at most `maxLagSeconds` behind the primary
 * (src/database/replica-reads.service.ts). Absent: every read runs on the primary.
 */
export interface ReplicaSettings {
  url: string;
  maxLagSeconds: number;
  /** `pgbouncer=true` on the replica's URL: reached through a transaction-mode pooler, its statements go unnamed. */
  pooled: boolean;
}

/** The replica's settings from the already read values, its problems added to `problems`; undefined without a replica. */
export function replicaSettings(
  url: string | undefined,
  maxLagSeconds: number,
  { databaseUrl, problems }: { databaseUrl: string | undefined; problems: string[] },
): ReplicaSettings | undefined {
  if (url === undefined) return undefined;
  if (!/^postgres(ql)?:/.test(url)) {
    problems.push('DATABASE_REPLICA_URL must be a postgres:// or postgresql:// URL');
    return undefined;
  }
  // The embedded database has no standby: a replica beside it would be another database altogether.
  if (!databaseUrl) problems.push('DATABASE_REPLICA_URL is only used with DATABASE_URL (without it the embedded database is used)');
  else if (url === databaseUrl) problems.push('DATABASE_REPLICA_URL must reach a standby, not the primary of DATABASE_URL');
  const pooler = new URL(url).searchParams.get('pgbouncer');
  if (pooler != null && pooler !== 'true' && pooler !== 'false')
    problems.push(`DATABASE_REPLICA_URL's pgbouncer parameter must be true or false (got "${pooler}")`);
  return { url, maxLagSeconds, pooled: pooler === 'true' };
}
