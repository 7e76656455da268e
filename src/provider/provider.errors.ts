import { DomainError } from '../common/domain-error';

/**
 * Every way a provider call can end badly, as a type. `outcomeKnown` is what callers that move
 * money must look at: false means the provider may have acted (timeout, 5xx, a lost or unreadable
 * answer), so the operation is UNKNOWN, never FAILED, and must not be blindly retried.
 */
export abstract class ProviderError extends DomainError {
  abstract readonly outcomeKnown: boolean;
  readonly providerStatus?: number;
  readonly providerMessage?: string;

  constructor(detail: string, extra: { providerStatus?: number; providerMessage?: string; cause?: unknown } = {}) {
    super(detail, { cause: extra.cause });
    this.providerStatus = extra.providerStatus;
    this.providerMessage = extra.providerMessage;
  }

  get problemExtensions(): Record<string, unknown> {
    return { outcomeKnown: this.outcomeKnown, ...(this.providerMessage ? { providerMessage: this.providerMessage } : {}) };
  }
}

/**
 * An error of another area that stands for a provider error and adds what that area left behind
 * (e.g. the card operation recorded): whatever the provider error proves, it proves too.
 */
export abstract class ProviderErrorCarrier extends DomainError {
  abstract readonly providerError: ProviderError;
}

/** The provider error an error is, or carries; undefined for any other error. */
export function providerErrorOf(error: unknown): ProviderError | undefined {
  if (error instanceof ProviderError) return error;
  return error instanceof ProviderErrorCarrier ? error.providerError : undefined;
}

/**
 * An error that proves the request never reached the provider (budget spent, provider unreachable,
 * our credentials refused): nothing can have happened, so the operation is FAILED, not UNKNOWN, and
 * its idempotency key may be used again. A refusal is excluded: the provider saw that request.
 */
export function provesNotSent(error: unknown): error is ProviderError | ProviderErrorCarrier {
  const providerError = providerErrorOf(error);
  return providerError !== undefined && providerError.outcomeKnown && !(providerError instanceof ProviderRejectedError);
}

/** Which of the provider's documented error bodies came back. */
export type ProviderErrorShape =
  | 'payin_failure_envelope' // pay-in 400 (b): full envelope, status FAILURE
  | 'success_false' // pay-in 400 (a), init and distribution: {success:false, message}
  | 'error_message' // token endpoint: {error:int, message}
  | 'code_success_message' // wallet link: {code:string, success:false, message}
  | 'unrecognised_json'
  | 'non_json';

/** The provider answered and refused: nothing happened on its side. */
export class ProviderRejectedError extends ProviderError {
  readonly status = 422;
  readonly code: string;
  readonly title = 'The payment provider refused the request';
  readonly outcomeKnown = true;

  constructor(
    readonly shape: ProviderErrorShape,
    extra: { providerStatus: number; providerMessage?: string; providerCode?: string | number; body?: unknown },
  ) {
    super(`The payment provider refused the request${extra.providerMessage ? `: ${extra.providerMessage}` : ''}.`, extra);
    this.code =
      shape === 'payin_failure_envelope'
        ? 'provider_payin_rejected'
        : shape === 'code_success_message'
          ? 'provider_link_rejected'
          : 'provider_rejected';
    this.providerCode = extra.providerCode;
    this.body = extra.body;
  }
  readonly providerCode?: string | number;
  /** The provider's parsed answer, for callers that keep it (never shown to clients as is). */
  readonly body?: unknown;
}

/**
 * No provider token could be had: the token endpoint refused our API key / secret, failed or gave
 * nothing usable. Our problem, not the client's: the answer is generic and never carries what the
 * token endpoint said (its messages echo credentials); that goes to the log, scrubbed. Nothing of
 * the client's request was sent.
 */
export class ProviderAuthenticationError extends ProviderError {
  readonly status = 502;
  readonly code = 'provider_authentication_failed';
  readonly title = 'The service could not authenticate with the payment provider';
  readonly outcomeKnown = true;

  constructor(extra: { providerStatus?: number; providerMessage?: string; cause?: unknown } = {}) {
    super('The service could not authenticate with the payment provider; nothing was sent. The operators have been told.', extra);
  }

  override get problemExtensions(): Record<string, unknown> {
    return { outcomeKnown: true };
  }
}

/** A 401 persisted after one token refresh and one retry. What the provider said stays in the log. */
export class ProviderUnauthorizedError extends ProviderError {
  readonly status = 502;
  readonly code = 'provider_unauthorized';
  readonly title = 'The payment provider refused the service credentials';
  readonly outcomeKnown = true;

  override get problemExtensions(): Record<string, unknown> {
    return { outcomeKnown: true };
  }
}

export class ProviderTimeoutError extends ProviderError {
  readonly status = 504;
  readonly code = 'provider_timeout';
  readonly title = 'The payment provider did not answer in time';
  readonly outcomeKnown = false;
}

/** The request never reached the provider (refused connection, unknown host): nothing happened. */
export class ProviderUnreachableError extends ProviderError {
  readonly status = 502;
  readonly code = 'provider_unreachable';
  readonly title = 'The payment provider could not be reached';
  readonly outcomeKnown = true;
}

/** The connection broke after the request was sent: the provider may have acted. */
export class ProviderConnectionLostError extends ProviderError {
  readonly status = 502;
  readonly code = 'provider_connection_lost';
  readonly title = 'The connection to the payment provider was lost';
  readonly outcomeKnown = false;
}

export class ProviderServerError extends ProviderError {
  readonly status = 502;
  readonly code = 'provider_unavailable';
  readonly title = 'The payment provider failed';
  readonly outcomeKnown = false;
}

/** A success status with a body we cannot read: something may have happened. */
export class ProviderBadResponseError extends ProviderError {
  readonly status = 502;
  readonly code = 'provider_bad_response';
  readonly title = 'The payment provider sent an unreadable answer';
  readonly outcomeKnown = false;
}

/** No bearer token could be had in time (another instance holds the refresh and never finished): nothing was sent. */
export class ProviderTokenUnavailableError extends ProviderError {
  readonly status = 503;
  readonly code = 'provider_token_unavailable';
  readonly title = 'No provider token is available right now';
  readonly outcomeKnown = true;
}

/** The provider itself says we sent too much (its 600/hour/IP limit). */
export class ProviderRateLimitedError extends ProviderError {
  readonly status = 503;
  readonly code = 'provider_rate_limited';
  readonly title = 'The payment provider is rate limiting the service';
  readonly outcomeKnown = true;
}

/** Our own shared budget for /api/agent/* is spent: the call was not sent. */
export class AgentBudgetExhaustedError extends ProviderError {
  readonly status = 429;
  readonly code = 'provider_budget_exhausted';
  readonly title = 'The hourly budget of provider calls is spent';
  readonly outcomeKnown = true;

  constructor(readonly retryAfterSeconds: number) {
    super(`The hourly budget of calls to the payment provider is spent; retry after ${retryAfterSeconds} s.`);
    this.headers['retry-after'] = String(retryAfterSeconds);
  }

  override get problemExtensions(): Record<string, unknown> {
    return { outcomeKnown: true, retryAfterSeconds: this.retryAfterSeconds };
  }
}

/**
 * The customer's own share of the provider budget (PROVIDER_CUSTOMER_HOURLY_LIMIT, or its override)
 * is spent: the call was not sent. `headers` carry Retry-After and the customer's RateLimit fields.
 */
export class CustomerLimitReachedError extends ProviderError {
  readonly status = 429;
  readonly code = 'customer_limit_reached';
  readonly title = 'Your hourly share of provider calls is spent';
  readonly outcomeKnown = true;

  constructor(
    readonly retryAfterSeconds: number,
    rateLimitHeaders: Record<string, string>,
  ) {
    super(
      `Your requests reached their hourly share of calls to the payment provider; nothing was sent. Retry after ${retryAfterSeconds} s.`,
    );
    Object.assign(this.headers, rateLimitHeaders, { 'retry-after': String(retryAfterSeconds) });
  }

  override get problemExtensions(): Record<string, unknown> {
    return { outcomeKnown: true, retryAfterSeconds: this.retryAfterSeconds };
  }
}
