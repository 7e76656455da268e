/** Fault injection of the sandbox: canned answers for the next requests matching a path. */

/** Envelopes a client may meet around the card transaction listing (the provider does not document it). */
export const TRANSACTION_ENVELOPES = [
  '',
  'data',
  'transactions',
  'items',
  'data.transactions',
  'data.items',
  'transactions.data',
  'items.data',
] as const;
export type TransactionEnvelope = (typeof TRANSACTION_ENVELOPES)[number];

/** A canned answer for the next `times` requests matching `path` (and `method`). */
export interface SandboxFault {
  /** Exact path, or a prefix ending with `*` (`/api/agent/*`). Query strings are ignored. */
  path: string;
  method?: string;
  /** How many matching requests get this answer; default 1. */
  times?: number;
  status?: number;
  /** JSON body of the answer. */
  body?: unknown;
  /** Raw body of the answer (wins over `body`); content type `contentType` or text/plain. */
  rawBody?: string;
  contentType?: string;
  /** Delay before answering; alone (no status/body/rawBody/drop) it delays the normal answer. */
  delayMs?: number;
  /** Destroy the connection without any answer. */
  dropConnection?: boolean;
  /**
   * Answer an error whose message echoes the request's secrets (credentials, bearer, callback URLs,
   * the card's number and CVV): see `echoAnswer` in sandbox.echo.ts. `status` overrides 401/400.
   */
  echo?: boolean;
  /**
   * Answer as usual, with a `message` that repeats the secrets the answer delivers (the token of
   * the token endpoint, a link's apikey, a new card's number and CVV): see `echoDelivered`.
   */
  echoDelivered?: boolean;
  /**
   * On a card route naming a known card: answer 200 with its transaction listing in this envelope
   * (`''` a bare array, `data`, `transactions`, `items`, or two dotted: `data.transactions`).
   */
  transactionsEnvelope?: TransactionEnvelope;
}

export interface ActiveFault extends Required<Pick<SandboxFault, 'path' | 'times'>> {
  id: number;
  fault: SandboxFault;
}

/** Exact path, or prefix when the pattern ends with `*`. */
export function pathMatches(pattern: string, path: string): boolean {
  return pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : pattern === path;
}

/** Throws, naming the field, when a fault could not be applied as written. */
export function assertValidFault(fault: SandboxFault): void {
  if (!fault || typeof fault.path !== 'string' || !fault.path.startsWith('/')) {
    throw new Error('fault.path must be a path starting with /');
  }
  const times = fault.times ?? 1;
  if (!Number.isInteger(times) || times < 1) throw new Error('fault.times must be a positive integer');
  if (fault.status !== undefined && (!Number.isInteger(fault.status) || fault.status < 100 || fault.status > 599)) {
    throw new Error('fault.status must be an HTTP status code');
  }
  if (fault.delayMs !== undefined && (typeof fault.delayMs !== 'number' || !(fault.delayMs >= 0))) {
    throw new Error('fault.delayMs must be a non-negative number');
  }
  if (fault.transactionsEnvelope !== undefined && !TRANSACTION_ENVELOPES.includes(fault.transactionsEnvelope)) {
    throw new Error(`fault.transactionsEnvelope must be one of ${TRANSACTION_ENVELOPES.map((e) => JSON.stringify(e)).join(', ')}`);
  }
}
