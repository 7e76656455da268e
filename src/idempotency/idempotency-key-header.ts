import { ValidationFailedError } from '../common/domain-error';
import { IDEMPOTENCY_KEY_HEADER, IdempotencyKeyRequiredError } from './idempotency.errors';

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The key of an Idempotency-Key header, or the 400 that its absence or shape deserves. */
export function parseIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined) throw new IdempotencyKeyRequiredError();
  if (Array.isArray(header)) {
    throw new ValidationFailedError([{ field: IDEMPOTENCY_KEY_HEADER, message: `send a single ${IDEMPOTENCY_KEY_HEADER} header` }]);
  }
  if (!KEY_PATTERN.test(header)) {
    throw new ValidationFailedError([
      { field: IDEMPOTENCY_KEY_HEADER, message: `${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 printable ASCII characters` },
    ]);
  }
  return header;
}
