import type { AppConfig } from '../config/app-config';

/**
 * Where the work that needs a PostgreSQL session of its own goes (the order events' LISTEN,
 * migrations and their schema engine's lock): DATABASE_DIRECT_URL when set, else DATABASE_URL
 * unless that is a transaction-mode pooler, where a session lasts one transaction. Undefined: no
 * such URL (pooled, without a direct one).
 */
export function sessionDatabaseUrl(config: Pick<AppConfig, 'databaseUrl' | 'databaseDirectUrl' | 'databasePooled'>): string | undefined {
  return config.databaseDirectUrl ?? (config.databasePooled ? undefined : config.databaseUrl);
}

/**
 * Where migrations run. Prisma's schema engine holds a session-level advisory lock while it
 * migrates, which a transaction-mode pooler would leave on whichever server connection took it.
 */
export function migrationDatabaseUrl(config: Pick<AppConfig, 'databaseUrl' | 'databaseDirectUrl' | 'databasePooled'>): string {
  const url = sessionDatabaseUrl(config);
  if (!url)
    throw new Error('DATABASE_URL goes through a pooler (pgbouncer=true): migrations need PostgreSQL directly; set DATABASE_DIRECT_URL');
  return url;
}
