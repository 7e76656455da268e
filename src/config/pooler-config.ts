/**
 * Startup parameters pg sends from a URL's query (`?options=-c…`, `?statement_timeout=…`): session
 * settings, which a transaction-mode pooler refuses or would apply to whichever client the server
 * connection serves next.
 */
const SESSION_STARTUP_PARAMETERS = ['options', 'statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout', 'replication'];

/**
 * `pgbouncer=true` on DATABASE_URL (Prisma's spelling) says it reaches a transaction-mode pooler;
 * DATABASE_DIRECT_URL then reaches PostgreSQL itself for the order events' LISTEN and migrations.
 * In production a pooled URL without a direct one is refused: without LISTEN live streams would
 * only poll, and migrations would take the schema engine's session lock through the pooler.
 */
export function poolerSettings(
  databaseUrl: string | undefined,
  databaseDirectUrl: string | undefined,
  { isProduction, problems }: { isProduction: boolean; problems: string[] },
): { databasePooled: boolean; databaseDirectUrl?: string } {
  const query = (value: string | undefined) => (value && /^postgres(ql)?:/.test(value) ? new URL(value).searchParams : undefined);
  const pooler = query(databaseUrl)?.get('pgbouncer');
  if (pooler != null && pooler !== 'true' && pooler !== 'false')
    problems.push(`DATABASE_URL's pgbouncer parameter must be true or false (got "${pooler}")`);
  const databasePooled = pooler === 'true';
  if (databaseDirectUrl !== undefined) {
    if (!databaseUrl) problems.push('DATABASE_DIRECT_URL is only used with DATABASE_URL (without it the embedded database is used)');
    if (!/^postgres(ql)?:/.test(databaseDirectUrl)) problems.push('DATABASE_DIRECT_URL must be a postgres:// or postgresql:// URL');
    else if (query(databaseDirectUrl)?.get('pgbouncer') === 'true')
      problems.push('DATABASE_DIRECT_URL must reach PostgreSQL itself, not a pooler (it carries pgbouncer=true)');
  }
  if (databasePooled) {
    const carried = SESSION_STARTUP_PARAMETERS.filter((name) => query(databaseUrl)?.has(name));
    if (carried.length)
      problems.push(
        `DATABASE_URL goes through a pooler (pgbouncer=true) and cannot carry session settings (${carried.join(', ')}): set them on the database role (ALTER ROLE … SET)`,
      );
    if (databaseDirectUrl === undefined && isProduction)
      problems.push(
        'DATABASE_DIRECT_URL is required in production when DATABASE_URL goes through a pooler (pgbouncer=true): order events are listened for, and migrations run, on PostgreSQL directly',
      );
  }
  return { databasePooled, databaseDirectUrl };
}
