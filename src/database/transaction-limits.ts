/**
 * A purge is a background chore deleting a batch at once: it may run long, but is cancelled past
 * this (`Database.inTransaction`'s statement timeout). It gives up rather than queue long for
 * a connection: the pool's connection wait (DATABASE_CONNECT_TIMEOUT_MS, 10 s) bounds that.
 */
export const PURGE_STATEMENT_TIMEOUT_MS = 60_000;
