import type { CardOperationKind, CardStatus } from '../cards/card.types';
export { MANUAL_CARD_OPERATION_OUTCOMES, type ManualCardOperationOutcome } from '../cards/card.types';
export { MANUAL_DISTRIBUTION_OUTCOMES, type ManualDistributionOutcome } from '../distributions/distribution.types';
import { ConflictError } from '../common/domain-error';

export const NOTE_MAX_LENGTH = 500;

/**
 * What a card operation a person declared SUCCEEDED did to its card. A top-up or withdrawal also
 * moved the balance, by an amount we know, from a balance we do not know for sure: the stored
 * balance is left as it was and the next answer of the provider (GET /v1/cards/{id}) corrects it.
 * (Which statuses may be decided, and the 409 otherwise, are each operation type's ResolutionRules.)
 */
export const CARD_STATUS_AFTER: Partial<Record<CardOperationKind, CardStatus>> = {
  FREEZE: 'FROZEN',
  UNFREEZE: 'ACTIVE',
  TERMINATE: 'TERMINATED',
};

export class OrderReviewNotNeededError extends ConflictError {
  constructor(id: string) {
    super('order_review_not_needed', `Order ${id} is not flagged for review (needsReview is false).`);
  }
}
