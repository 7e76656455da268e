import { DomainError } from '../common/domain-error';

/** The URL may not receive webhooks (scheme, credentials, or an address that is not public), with the field error. */
export class WebhookUrlNotAllowedError extends DomainError {
  readonly status = 400;
  readonly code = 'webhook_url_not_allowed';
  readonly title = 'The URL may not receive webhooks';

  constructor(reason: string) {
    super(`The URL may not receive webhooks: ${reason}.`, { errors: [{ field: 'url', message: `url ${reason}` }] });
  }
}
