import { DomainError } from '../common/domain-error';
import type { BlockingOperation } from './customer-erasure.types';

/**
 * The customer has operations whose outcome is still open (an order PENDING, PROCESSING or
 * UNKNOWN, a card operation or distribution PENDING or UNKNOWN, a wallet link being made): their
 * records are still needed as they are to settle them. Nothing was changed; the problem names them.
 */
export class ErasureBlockedError extends DomainError {
  readonly status = 409;
  readonly code = 'erasure_blocked';
  readonly title = 'The customer has operations still in progress';

  constructor(private readonly blocking: readonly BlockingOperation[]) {
    super(
      `The customer has ${blocking.length === 100 ? 'at least 100' : blocking.length} operation(s) still open (${blocking
        .slice(0, 5)
        .map((operation) => `${operation.type} ${operation.id} ${operation.status}`)
        .join(', ')}${blocking.length > 5 ? ', …' : ''}): settle or resolve them, then ask again. Nothing was changed.`,
    );
  }

  get problemExtensions(): Record<string, unknown> {
    return { blockingOperations: this.blocking };
  }
}
