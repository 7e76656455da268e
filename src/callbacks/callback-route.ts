import type { INestApplicationContext } from '@nestjs/common';
import { ORDER_CALLBACKS, type OrderCallbacks } from '../orders/order-callbacks.port';
import { STORED_BODY_BYTES } from './callbacks.service';

/**
 * What the HTTP edge (create-app.ts) knows of the provider's callback routes, in one place: their
 * prefix, the bounds of their bodies, and which calls carry a token we issued.
 */

/**
 * The provider's callback routes (CallbacksController: `v1/callbacks` + `payin/:orderId/:outcome`),
 * as the router names them (whatever the request's spelling).
 */
export const CALLBACK_ROUTE_PREFIX = '/v1/callbacks/payin/';

/**
 * A callback body is read to its end, up to this size, but only its head is kept in memory (what
 * is stored, and a few bytes so that the cut falls on a whole character): a signed callback is
 * never lost to its size, and an anonymous one never costs more than its head.
 */
export const CALLBACK_BODY_MAX_BYTES = 16 * 1024 * 1024;
export const CALLBACK_BODY_KEPT_BYTES = STORED_BODY_BYTES + 4;

/** Whether a call to a callback URL carries the token issued for that order and outcome (constant time). */
export function callbackUrlVerifier(app: INestApplicationContext): (orderId: string, outcome: string, token: unknown) => boolean {
  const orders = app.get<OrderCallbacks>(ORDER_CALLBACKS);
  return (orderId, outcome, token) => orders.verifyCallbackUrl(orderId, outcome, token);
}
