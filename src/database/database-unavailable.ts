import { DomainError } from '../common/domain-error';

/** Seconds a client is asked to wait before retrying while the database cannot be reached. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** The database could not be reached or dropped the connection: nothing about the request is known to be wrong. */
export class DatabaseUnavailableError extends DomainError {
  readonly status = 503;
  readonly code = 'database_unavailable';
  readonly title = 'The database is unavailable';

  constructor(cause?: unknown) {
    super(`The service cannot reach its database right now; retry after ${DATABASE_RETRY_AFTER_SECONDS} s.`, { cause });
    this.headers['retry-after'] = String(DATABASE_RETRY_AFTER_SECONDS);
  }

  get problemExtensions(): Record<string, unknown> {
    return { retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS };
  }
}

// Prisma: can't reach (P1001), timed out (P1002, P1008), server closed the connection (P1017),
// pool timeout (P2024), too many connections (P2037).
const PRISMA_CONNECTION_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037']);
// adapter-pg's classification of the driver's error.
const ADAPTER_CONNECTION_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
// Node's socket errors, as pg raises them. EMFILE/ENFILE: the process (or the system) has no file
// descriptor left for a new connection; it passes when connections close (adapter-pg does not classify it).
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EMFILE',
  'ENFILE',
]);
// PostgreSQL: connection exception (class 08), too many connections, shutting down / starting up.
const POSTGRES_CONNECTION_STATE = /^(08...|53300|57P01|57P02|57P03)$/;
// pg's own messages for a dead connection or an exhausted pool (they carry no code).
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated( unexpectedly| due to connection timeout)?|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|Cannot use a pool after calling end on the pool)$/;

/**
 * True when an error (from Prisma, adapter-pg or pg, possibly wrapped in causes) says the database
 * could not be reached or dropped the connection, as opposed to refusing a statement.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length && seen.size < 16) {
    const current = pending.pop();
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    seen.add(current);
    const fields = current as {
      code?: unknown;
      errorCode?: unknown;
      kind?: unknown;
      message?: unknown;
      cause?: unknown;
      meta?: { driverAdapterError?: unknown };
    };
    for (const code of [fields.code, fields.errorCode]) {
      if (typeof code !== 'string') continue;
      if (PRISMA_CONNECTION_CODES.has(code) || SOCKET_CODES.has(code) || POSTGRES_CONNECTION_STATE.test(code)) return true;
    }
    if (typeof fields.kind === 'string' && ADAPTER_CONNECTION_KINDS.has(fields.kind)) return true;
    if (typeof fields.message === 'string' && PG_CONNECTION_MESSAGES.test(fields.message.trim())) return true;
    pending.push(fields.cause, fields.meta?.driverAdapterError);
  }
  return false;
}
