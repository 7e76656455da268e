import { DomainError } from '../common/domain-error';

/**
 * A customer links only its own email: the token's `email` claim, verified by the identity
 * provider (`email_verified: true`). Finance and admin may link any email.
 */
export class WalletLinkEmailNotVerifiedError extends DomainError {
  readonly status = 403;
  readonly code = 'wallet_link_email_not_verified';
  readonly title = 'The email is not a verified email of the caller';
}

/**
 * The email already has a wallet link here. For the caller's own link the problem names it
 * (`walletLinkId`, `matricule`), so a retry after a lost answer finds what it created; for
 * someone else's it names nothing.
 */
export class WalletLinkExistsError extends DomainError {
  readonly status = 409;
  readonly code = 'wallet_link_exists';
  readonly title = 'A wallet link already exists for this email';

  constructor(
    detail: string,
    private readonly existing?: { id: string; matricule: string },
  ) {
    super(detail);
  }

  get problemExtensions(): Record<string, unknown> {
    return this.existing ? { walletLinkId: this.existing.id, matricule: this.existing.matricule } : {};
  }
}

/**
 * Another request is linking this email right now (on this instance or another): its answer is
 * not known yet. Retry after `Retry-After` seconds: the retry gets the link (`wallet_link_exists`,
 * naming it to its owner) or, if that request failed, makes its own.
 */
export class WalletLinkInProgressError extends DomainError {
  readonly status = 409;
  readonly code = 'wallet_link_in_progress';
  readonly title = 'A wallet link for this email is being made';

  constructor(retryAfterSeconds: number) {
    super('Another request is linking this email at the payment provider right now; retry shortly.');
    this.headers['retry-after'] = String(retryAfterSeconds);
  }
}
