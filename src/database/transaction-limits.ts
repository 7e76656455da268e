/**
 * How long a transaction may wait for a pooled connection (`maxWait`) and run (`timeout`), in ms.
 * Writes that take row or advisory locks may queue behind each other at busy times: waiting is
 * expected there, failing is not.
 */
export const TRANSACTION_LIMITS = { maxWait: 15_000, timeout: 15_000 } as const;

/**
 * A purge is a background chore deleting a batch at once: it may run long, but is cancelled past
 * this (`PrismaService.inTransaction`'s statement timeout). It gives up rather than queue long for
 * a connection: the pool's connection wait (DATABASE_CONNECT_TIMEOUT_MS, 10 s) bounds that.
 */
export const PURGE_STATEMENT_TIMEOUT_MS = 60_000;
