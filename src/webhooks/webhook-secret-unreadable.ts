/**
 * An endpoint's current signing secret that no configured key opens (its key was removed from
 * DATA_ENCRYPTION_PREVIOUS_KEYS before `npm run keys:reencrypt` re-sealed it). A delivery is never
 * sent unsigned: the attempt fails unsent with this message, and is retried on the schedule, so
 * that restoring the key (or rotating the endpoint's secret) lets the next attempt go out.
 */
export class WebhookSecretUnreadable extends Error {
  constructor(
    readonly endpointId: string,
    reason: string,
  ) {
    // The reason names the key id the value was sealed with (not secret), never a value.
    super(`not sent: the endpoint's signing secret cannot be opened (${reason}); restore its key or rotate the secret`);
  }
}

/** Which of an endpoint's secrets could not be opened. */
export type UnreadableSecret = 'current' | 'previous';
