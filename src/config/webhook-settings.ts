/** Delivery of events to the merchant's webhook endpoints (WEBHOOK_*), as `loadAppConfig` reads them. */
export interface WebhookSettings {
  /** WEBHOOK_TIMEOUT_MS: one attempt, from connecting to the end of the answer. */
  timeoutMs: number;
  /** WEBHOOK_RETRY_SCHEDULE: the delay in seconds before each attempt (the first is usually 0). */
  retrySchedule: number[];
  /** WEBHOOK_ALLOW_INSECURE_URLS: http:// endpoint URLs are accepted (true outside production). */
  allowInsecureUrls: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_URLS: URLs that resolve to loopback, private, link-local or metadata addresses are accepted (true outside production). */
  allowPrivateUrls: boolean;
  /**
   * WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: attempts one endpoint may have in flight at once on one
   * instance, enforced by the claim itself, so that an endpoint that hangs, answers slowly or is down
   * takes only its share of the instance's delivery slots.
   */
  maxInFlightPerEndpoint: number;
}

/** The most attempts one instance has in flight at once, all endpoints together: the bound of WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT too. */
export const WEBHOOK_MAX_IN_FLIGHT = 32;
