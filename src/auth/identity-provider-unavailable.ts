import { DomainError } from '../common/domain-error';

/** Seconds a client is asked to wait before retrying while the identity provider cannot be reached. */
export const IDENTITY_PROVIDER_RETRY_AFTER_SECONDS = 5;

/**
 * The identity provider's discovery document or signing keys could not be had: the token may be
 * fine, so the caller is not told to sign in again (401) but to retry (503). Still fail closed:
 * nothing is served on an unverified token.
 */
export class IdentityProviderUnavailableError extends DomainError {
  readonly status = 503;
  readonly code = 'identity_provider_unavailable';
  readonly title = 'The identity provider is unavailable';

  constructor(detail: string, options?: { cause?: unknown }) {
    super(`${detail}; retry after ${IDENTITY_PROVIDER_RETRY_AFTER_SECONDS} s.`, options);
    this.headers['retry-after'] = String(IDENTITY_PROVIDER_RETRY_AFTER_SECONDS);
  }
}
