/** What `@Idempotent(...)` records on a route for the interceptor; apart so neither imports the other. */

/** Metadata key of an `@Idempotent(...)` route: its scope and options. */
export const IDEMPOTENT_METADATA = 'idempotency:route';

export interface IdempotentOptions {
  /**
   * What is kept of a successful answer, hence what a replay returns. For answers carrying
   * something that must never be stored (a card's number and CVV): strip it, and add a member
   * saying so, since only replays ever see the result.
   */
  storeBody?: (body: unknown) => unknown;
  /**
   * Errors after which the key is freed instead of the error being replayed, for a handler that
   * knows the error means nothing happened (e.g. a budget refusal before any provider call).
   * Validation failures always free the key.
   */
  releaseOn?: (error: unknown) => boolean;
  /**
   * The key is claimed by the statement that stores the handler's resource (idempotencyLinkCte),
   * not by a statement of its own before the handler runs: one round trip fewer on the hot path.
   * For a handler that writes nothing before that statement. When another request holds the key,
   * that statement stores nothing and the route falls back to the usual replay, wait or recovery.
   */
  claimInResourceStatement?: boolean;
  /** How long a retry of this route waits for the first request in flight; the module's default (5 s) otherwise. */
  waitMs?: number;
}

export interface IdempotentRoute extends IdempotentOptions {
  scope: string;
}
