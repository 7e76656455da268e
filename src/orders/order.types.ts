/** Domain shapes of the orders area; Prisma's types stay inside the repositories. */

export const ORDER_STATUSES = ['PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'UNKNOWN', 'EXPIRED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** No callback changes these: a contradicting one is recorded as a conflict for finance. */
export const FINAL_STATUSES: readonly OrderStatus[] = ['SUCCEEDED', 'FAILED'];

/** A callback decides an order in one of these (PENDING too: a callback may beat the provider's answer). */
export const CALLBACK_DECIDABLE: readonly OrderStatus[] = ['PENDING', 'PROCESSING', 'UNKNOWN', 'EXPIRED'];

export type CallbackOutcome = 'success' | 'failure';

/**
 * What a stored callback did. APPLIED: it decided its order. DUPLICATE: the order was already
 * decided the same way. CONFLICT: the order was decided the other way (kept, flagged for review).
 * REJECTED: no order of ours (unknown URL or wrong token).
 */
export const CALLBACK_RESULTS = ['APPLIED', 'DUPLICATE', 'CONFLICT', 'REJECTED'] as const;
export type CallbackResult = (typeof CALLBACK_RESULTS)[number];

/** What a provider callback may do to an order: the callbacks area decides it, the orders area makes it. */
export type CallbackTransition = { kind: 'decide'; to: Extract<OrderStatus, 'SUCCEEDED' | 'FAILED'> } | { kind: 'flag_for_review' };

export interface OrderRecord {
  id: string;
  reference: string;
  customerId: string;
  status: OrderStatus;
  /** Plain decimal string as stored, e.g. "1500" or "12.5". */
  amount: string;
  currency: string;
  service: number;
  wallet: string;
  description: string;
  payer: string;
  payerEmail: string;
  providerReference: string | null;
  providerTransactionReference: string | null;
  failureReason: string | null;
  needsReview: boolean;
  submittedAt: Date | null;
  processingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface StatusChangeRecord {
  id: bigint;
  orderId: string;
  fromStatus: OrderStatus | null;
  toStatus: OrderStatus;
  reason: string;
  detail: string | null;
  callbackId: string | null;
  /** Who decided a manual transition (the token's `sub`) and their note; null for the service's own. */
  actor: string | null;
  note: string | null;
  at: Date;
}

/** An order as its detail shows it: with its history and its callbacks, read in one statement. */
export interface OrderDetailRecord {
  order: OrderRecord;
  history: Pick<StatusChangeRecord, 'fromStatus' | 'toStatus' | 'reason' | 'detail' | 'callbackId' | 'actor' | 'note' | 'at'>[];
  callbacks: { id: string; outcome: string; result: CallbackResult; receivedAt: Date }[];
}

/** An order as the request gave it, before it is stored PENDING. */
export type NewOrder = Pick<
  OrderRecord,
  'reference' | 'customerId' | 'amount' | 'currency' | 'service' | 'wallet' | 'description' | 'payer' | 'payerEmail'
>;

export interface OrderFilter {
  customerId?: string;
  status?: OrderStatus;
  currency?: string;
  from?: Date;
  to?: Date;
  needsReview?: boolean;
}

/** What the provider's answer to the pay-in did to the order. */
export type SubmissionOutcome =
  | { status: 'PROCESSING'; providerReference: string; providerTransactionReference: string | null; detail: string }
  | { status: 'FAILED'; failureReason: string; providerReference?: string | null }
  | { status: 'UNKNOWN'; detail: string };

/** Published after every committed transition. */
export interface OrderStatusEvent {
  orderId: string;
  changeId: string;
  fromStatus: OrderStatus | null;
  status: OrderStatus;
  reason: string;
  at: string;
}

/** What a person may decide about an order the provider left undecided. */
export const MANUAL_ORDER_OUTCOMES = ['SUCCEEDED', 'FAILED'] as const;
export type ManualOrderOutcome = (typeof MANUAL_ORDER_OUTCOMES)[number];

/** The person behind a manual change and the reason they gave. */
export interface ManualActor {
  actor: string;
  note: string;
}

/** Which orders a manual resolution may move: these statuses, and PENDING once older than the window. */
export interface ResolvableGuard {
  statuses: readonly OrderStatus[];
  pendingOlderThanSeconds: number;
}

/** A manual change that happened, and the event its streams are told. */
export interface ManualOrderChange {
  order: OrderRecord;
  event: OrderStatusEvent;
}
