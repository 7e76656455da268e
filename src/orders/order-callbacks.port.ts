import type { TransactionRun } from '../database/database';
import type { CallbackTransition, OrderRecord, OrderStatusEvent } from './order.types';

/**
 * The one interface between the orders area and the callbacks area. The callbacks area depends on
 * this file (and on OrdersModule, which provides it under ORDER_CALLBACKS); the orders area
 * implements it (OrderCallbacksAdapter) and imports nothing of the callbacks area.
 * `.dependency-cruiser.cjs` holds both rules.
 */
export {
  CALLBACK_DECIDABLE,
  CALLBACK_RESULTS,
  ORDER_STATUSES,
  type CallbackOutcome,
  type CallbackResult,
  type CallbackTransition,
  type OrderStatus,
  type OrderStatusEvent,
} from './order.types';

/** The transaction a callback is stored in (its `run`): the order is locked and moved in the same one. */
export type CallbackTransaction = TransactionRun;

/** What a callback needs of the order it proved: which one, and where it stands. */
export type LockedOrder = Pick<OrderRecord, 'id' | 'status'>;

export const ORDER_CALLBACKS = Symbol('ORDER_CALLBACKS');

export interface OrderCallbacks {
  /** True when `token` is the one issued for this order's `outcome` URL (checked in constant time). */
  verifyCallbackUrl(orderId: string, outcome: string, token: unknown): boolean;
  /** Locks the order for the rest of the transaction `run` sends to; undefined when there is no such order. */
  lockForCallback(run: CallbackTransaction, orderId: string): Promise<LockedOrder | undefined>;
  /** Makes the transition the callback decided, in its transaction; the event to publish once committed, if the status moved. */
  applyCallbackTransition(
    run: CallbackTransaction,
    order: LockedOrder,
    transition: CallbackTransition,
    callbackId: string,
  ): Promise<OrderStatusEvent | undefined>;
  /** Tells the order's live listeners about a committed change. */
  publishLocal(event: OrderStatusEvent | undefined): void;
}
