import { CALLBACK_DECIDABLE, type CallbackOutcome, type CallbackTransition, type OrderStatus } from '../orders/order-callbacks.port';
import type { CallbackResult } from './callback.types';

/** What a callback does, and the order transition it asks of the orders area (none for DUPLICATE and REJECTED). */
export type CallbackDecision =
  | { result: Extract<CallbackResult, 'APPLIED' | 'CONFLICT'>; transition: CallbackTransition }
  | { result: Extract<CallbackResult, 'DUPLICATE' | 'REJECTED'>; transition?: undefined };

/**
 * The decision table. `orderStatus` is that of the order the callback's token proved, read with
 * the order locked, and `outcome` the one the token was issued for; either is undefined when the
 * token proved nothing (unknown URL, wrong token) or the order does not exist: REJECTED.
 * An undecided order (PENDING too: a callback may beat the provider's answer to the pay-in) takes
 * the callback's outcome; a decided one is never changed: the same outcome is a duplicate, the
 * other one a conflict that flags the order for a person.
 */
export function decideCallback(orderStatus: OrderStatus | undefined, outcome: CallbackOutcome | undefined): CallbackDecision {
  if (orderStatus === undefined || outcome === undefined) return { result: 'REJECTED' };
  if (CALLBACK_DECIDABLE.includes(orderStatus)) {
    return { result: 'APPLIED', transition: { kind: 'decide', to: outcome === 'success' ? 'SUCCEEDED' : 'FAILED' } };
  }
  const agrees = (orderStatus === 'SUCCEEDED' && outcome === 'success') || (orderStatus === 'FAILED' && outcome === 'failure');
  return agrees ? { result: 'DUPLICATE' } : { result: 'CONFLICT', transition: { kind: 'flag_for_review' } };
}
