import { DomainError } from '../common/domain-error';
import { maskCardNumbersIn } from '../logging/redaction';
import { ProviderErrorCarrier, type ProviderError } from '../provider/provider.errors';
import type { CardOperationStatus } from './card.types';

// The card-number masking of provider texts is the one scrubber's (the provider boundary applies it to every answer).
export { maskCardNumbersIn } from '../logging/redaction';

/** A terminated card refuses every later operation, before anything is sent to the provider. */
export class CardTerminatedError extends DomainError {
  readonly status = 409;
  readonly code = 'card_terminated';
  readonly title = 'The card is terminated';

  constructor(readonly cardId: string) {
    super(`Card ${cardId} is terminated: termination cannot be undone and the card accepts no further operation.`);
  }

  get problemExtensions(): Record<string, unknown> {
    return { cardId: this.cardId };
  }
}

/** Money does not move on a frozen card: unfreeze it first. */
export class CardFrozenError extends DomainError {
  readonly status = 409;
  readonly code = 'card_frozen';
  readonly title = 'The card is frozen';

  constructor(readonly cardId: string) {
    super(`Card ${cardId} is frozen: unfreeze it (POST /v1/cards/${cardId}/unfreeze) before moving money.`);
  }

  get problemExtensions(): Record<string, unknown> {
    return { cardId: this.cardId };
  }
}

/**
 * The provider's error for a stored card operation: the same status, code and members as the
 * provider error alone, plus the operation it left behind, so that a client whose request timed
 * out can find the UNKNOWN operation (GET /v1/card-operations/{operationId}).
 */
export class CardProviderError extends ProviderErrorCarrier {
  readonly status: number;
  readonly code: string;
  readonly title: string;

  constructor(
    readonly providerError: ProviderError,
    readonly operation: { id: string; status: CardOperationStatus },
  ) {
    super(maskCardNumbersIn(`${providerError.detail} Card operation ${operation.id} is recorded as ${operation.status}.`), {
      cause: providerError,
    });
    this.status = providerError.status;
    this.code = providerError.code;
    this.title = providerError.title;
    Object.assign(this.headers, providerError.headers);
  }

  get problemExtensions(): Record<string, unknown> {
    const extensions: Record<string, unknown> = {
      ...this.providerError.problemExtensions,
      operationId: this.operation.id,
      operationStatus: this.operation.status,
    };
    if (typeof extensions.providerMessage === 'string') extensions.providerMessage = maskCardNumbersIn(extensions.providerMessage);
    return extensions;
  }
}

/**
 * A retry of a card creation whose request died: its CREATE operation left no card (UNKNOWN,
 * FAILED, or still PENDING). Nothing is asked of the provider again; the operation says the rest.
 */
export class CardCreationIncompleteError extends DomainError {
  readonly status = 409;
  readonly code = 'card_creation_incomplete';
  readonly title = 'The card creation of this Idempotency-Key left no card';

  constructor(readonly operation: { id: string; status: CardOperationStatus; failureReason: string | null }) {
    super(
      `The request that created a card with this Idempotency-Key was interrupted; its operation ${operation.id} is ${operation.status} and no card is recorded. See GET /v1/card-operations/${operation.id}.`,
    );
  }

  get problemExtensions(): Record<string, unknown> {
    return { operationId: this.operation.id, operationStatus: this.operation.status, failureReason: this.operation.failureReason };
  }
}
