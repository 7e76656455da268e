/** Domain shapes of the callbacks area; Prisma's types stay inside the repository. */
import type { CallbackOutcome, CallbackResult, OrderStatusEvent } from '../orders/order-callbacks.port';

export { CALLBACK_RESULTS, type CallbackResult } from '../orders/order-callbacks.port';

export interface CallbackRecord {
  id: string;
  orderId: string | null;
  pathOrderId: string;
  outcome: string;
  result: CallbackResult;
  method: string;
  query: unknown;
  headers: unknown;
  contentType: string | null;
  rawBody: string | null;
  remoteIp: string | null;
  requestId: string | null;
  receivedAt: Date;
}

/** A callback as it arrived, already redacted and bounded, before it is stored. */
export type IncomingCallback = Pick<
  CallbackRecord,
  'pathOrderId' | 'outcome' | 'method' | 'query' | 'headers' | 'contentType' | 'rawBody' | 'remoteIp' | 'requestId'
> & {
  /** Set only when the URL's token proved it was issued for this order and this outcome. */
  verified: { orderId: string; outcome: CallbackOutcome } | null;
};

/** A stored callback and, when it moved its order, the event to tell the order's listeners. */
export interface StoredCallback {
  callback: CallbackRecord;
  event?: OrderStatusEvent;
}
