import { readFileSync } from 'node:fs';

/**
 * How long a client has to send its request. Node's defaults let a request whose headers are in
 * wait for its body forever (Fastify sets `requestTimeout` to 0) and look only every 30 s: a
 * client could hold sockets open at no cost until the process ran out of file descriptors. A
 * request of this API is a few KiB of JSON, sent at once; these leave a slow network ample room.
 *
 * `requestTimeout` covers receiving the request only: a long-lived answer (a live-status stream)
 * is not cut by it.
 */
export const HTTP_TIMEOUTS = {
  /** From the connection (or the end of the previous request) to the end of the headers. */
  headersTimeoutMs: 10_000,
  /** From the connection (or the end of the previous request) to the end of the body. */
  requestTimeoutMs: 15_000,
  /** How often node looks for requests past these times (a pass over the open connections). */
  connectionsCheckingIntervalMs: 1_000,
} as const;

/** Soft limit assumed where it cannot be read (no /proc): the usual default of Unix systems. */
export const ASSUMED_FILE_DESCRIPTOR_LIMIT = 1024;
/**
 * Descriptors kept for what is not an HTTP client: node itself, the provider's and the identity
 * provider's sockets, the log destination, the embedded database's files, exports being written.
 */
export const OTHER_DESCRIPTORS = 256;

/**
 * The process's soft limit of open files, from /proc/self/limits (Linux). Node raises the soft
 * limit to the hard one at start, so this is the limit the process runs under. Undefined when it
 * cannot be read or is unlimited.
 */
export function fileDescriptorLimit(readLimits: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number | undefined {
  let text: string;
  try {
    text = readLimits();
  } catch {
    return undefined;
  }
  const match = /^Max open files\s+(\d+|unlimited)\s/m.exec(text);
  if (!match || match[1] === 'unlimited') return undefined;
  const limit = Number(match[1]);
  return Number.isSafeInteger(limit) && limit > 0 ? limit : undefined;
}

export interface ConnectionCap {
  /** Connections the server holds at once; at it, a newcomer takes an idle one's place or is closed (admitConnections). */
  maxConnections: number;
  /** The descriptor limit it was derived from, and whether it was read or assumed. */
  fileDescriptorLimit: number;
  limitKnown: boolean;
  /** A configured cap above what the descriptors allow, lowered to it. */
  lowered: boolean;
}

/**
 * The cap on concurrent connections: the descriptor limit less the database pool and
 * OTHER_DESCRIPTORS, so that a flood of connections can never take the descriptors a database
 * connection needs (a query then failed with EMFILE). A configured cap may only lower it; where
 * the limit is unknown, a configured cap is taken as is.
 */
export function connectionCap(options: {
  fileDescriptorLimit: number | undefined;
  databasePoolSize: number;
  configured?: number;
}): ConnectionCap {
  const limitKnown = options.fileDescriptorLimit !== undefined;
  const limit = options.fileDescriptorLimit ?? ASSUMED_FILE_DESCRIPTOR_LIMIT;
  const derived = Math.max(1, limit - options.databasePoolSize - OTHER_DESCRIPTORS);
  if (options.configured === undefined) return { maxConnections: derived, fileDescriptorLimit: limit, limitKnown, lowered: false };
  if (!limitKnown || options.configured <= derived)
    return { maxConnections: options.configured, fileDescriptorLimit: limit, limitKnown, lowered: false };
  return { maxConnections: derived, fileDescriptorLimit: limit, limitKnown, lowered: true };
}
