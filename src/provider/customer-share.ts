import { ScopedValue } from '../common/async-scope';
import { secondsOf, type BudgetShareRow } from './agent-budget-take';
import { CustomerLimitReachedError } from './provider.errors';

/** The name of the customer's policy in the RateLimit-Policy and RateLimit fields. */
export const CUSTOMER_POLICY = 'customer';
/** The window of a customer's share: the rolling hour, in seconds. */
export const CUSTOMER_WINDOW_SECONDS = 3600;

/** A customer's share of the provider budget, as a take left it. */
export interface CustomerShare {
  /** Calls per rolling hour (the override, or PROVIDER_CUSTOMER_HOURLY_LIMIT). */
  limit: number;
  /** Calls counted in the rolling hour, this take included. */
  used: number;
  /** Seconds until the customer's oldest counted call leaves the window (a slot frees). */
  freesInSeconds: number;
}

/**
 * The IETF rate-limit fields (draft-ietf-httpapi-ratelimit-headers-09/-10) of a customer's share:
 * `RateLimit-Policy: "customer";q=30;w=3600` and `RateLimit: "customer";r=12;t=1800`, where `r` is
 * what is left of the quota and `t` the seconds until a slot frees (the rolling window has no
 * single reset; the draft lets `t` be the effective window of the remaining quota).
 */
export function rateLimitHeaders(share: CustomerShare): Record<string, string> {
  const remaining = Math.max(0, share.limit - share.used);
  return {
    'ratelimit-policy': `"${CUSTOMER_POLICY}";q=${share.limit};w=${CUSTOMER_WINDOW_SECONDS}`,
    ratelimit: `"${CUSTOMER_POLICY}";r=${remaining};t=${share.used > 0 ? Math.max(0, share.freesInSeconds) : 0}`,
  };
}

/** Where the request in progress writes its customer's share: its reply's headers. */
export interface CustomerShareSink {
  /** The token's `sub`: the customer whose requests are counted. */
  customer: string;
  write(headers: Record<string, string>): void;
}

/** The customer of the request in progress and where its share goes (set by @SpendsProviderBudget); none for staff and jobs. */
export const customerShareScope = new ScopedValue<CustomerShareSink>('customerShare');

/** The customer's share a take answered; undefined when the take counted no customer (staff, jobs). */
export function customerShareOf(row: BudgetShareRow): CustomerShare | undefined {
  if (row.customerLimit === null) return undefined;
  return { limit: row.customerLimit, used: row.customerUsed, freesInSeconds: secondsOf(row.customerFreesInMs) };
}

/** The refusal of a take its customer's share refused: Retry-After is when the customer's oldest counted call leaves the hour. */
export function customerLimitReached(row: BudgetShareRow): CustomerLimitReachedError {
  const retryAfterSeconds = secondsOf(row.customerFreesInMs);
  const share = customerShareOf(row);
  // Refused under the bucket's lock after a racing taker of the same customer: what the statement read was older, the share is spent.
  return new CustomerLimitReachedError(
    retryAfterSeconds,
    share ? rateLimitHeaders({ ...share, used: Math.max(share.used, share.limit) }) : {},
  );
}
