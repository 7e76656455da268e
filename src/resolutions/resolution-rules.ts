import type { CardOperationKind, CardStatus } from '../cards/card.types';
export { MANUAL_CARD_OPERATION_OUTCOMES, type ManualCardOperationOutcome } from '../cards/card.types';
export { MANUAL_DISTRIBUTION_OUTCOMES, type ManualDistributionOutcome } from '../distributions/distribution.types';
import { ConflictError } from '../common/domain-error';
import type { OrderStatus } from '../orders/order.types';

export const NOTE_MAX_LENGTH = 500;

/**
 * An order a person may decide: the provider's answer was lost (UNKNOWN) or never came (EXPIRED).
 * A PENDING order qualifies too once older than the interrupted-work window: the process that
 * stored it died before (or while) asking the provider.
 */
export const RESOLVABLE_ORDER_STATUSES: readonly OrderStatus[] = ['UNKNOWN', 'EXPIRED'];

/** Whether this order's status can be decided by a person at all (PENDING still depends on its age). */
export function orderStatusMayBeResolved(status: OrderStatus): boolean {
  return status === 'PENDING' || RESOLVABLE_ORDER_STATUSES.includes(status);
}

/**
 * What a card operation a person declared SUCCEEDED did to its card. A top-up or withdrawal also
 * moved the balance, by an amount we know, from a balance we do not know for sure: the stored
 * balance is left as it was and the next answer of the provider (GET /v1/cards/{id}) corrects it.
 */
export const CARD_STATUS_AFTER: Partial<Record<CardOperationKind, CardStatus>> = {
  FREEZE: 'FROZEN',
  UNFREEZE: 'ACTIVE',
  TERMINATE: 'TERMINATED',
};

export class OrderNotResolvableError extends ConflictError {
  constructor(id: string, status: OrderStatus, pendingWindowSeconds: number) {
    super(
      'order_not_resolvable',
      status === 'PENDING'
        ? `Order ${id} is PENDING for less than ${pendingWindowSeconds} seconds: its provider call may still be answered. Try again later.`
        : `Order ${id} is ${status}: only UNKNOWN, EXPIRED or PENDING orders older than ${pendingWindowSeconds} seconds can be resolved by hand.`,
    );
  }
}

export class OrderReviewNotNeededError extends ConflictError {
  constructor(id: string) {
    super('order_review_not_needed', `Order ${id} is not flagged for review (needsReview is false).`);
  }
}

export class CardOperationNotResolvableError extends ConflictError {
  constructor(id: string, status: string) {
    super('card_operation_not_resolvable', `Card operation ${id} is ${status}: only an UNKNOWN operation can be resolved by hand.`);
  }
}

export class DistributionNotResolvableError extends ConflictError {
  constructor(id: string, status: string) {
    super('distribution_not_resolvable', `Distribution ${id} is ${status}: only an UNKNOWN distribution can be resolved by hand.`);
  }
}
