/** What the sandbox keeps of pay-ins and of the callbacks it delivers for them. */

export type CallbackOutcome = 'SUCCESS' | 'FAILED';

export interface CallbackPayload {
  status: CallbackOutcome;
  reference: string;
  external_reference: string;
  amount: string;
  currency: string;
  transaction_reference: string | null;
  message: string;
  created_at: string;
}

/** One delivery attempt of a pay-in notification. */
export interface CallbackDelivery {
  id: number;
  at: string;
  url: string;
  /** Provider reference of the pay-in. */
  reference: string;
  orderId: string;
  outcome: CallbackOutcome;
  /** 1 for the first attempt, up to 5. */
  attempt: number;
  /** HTTP status received, null on network error. */
  httpStatus: number | null;
  ok: boolean;
  error?: string;
  payload: CallbackPayload;
}

export type PayInStatus = 'PROCESSING' | 'SUCCESS' | 'FAILED';

export interface PayIn {
  reference: string;
  order_id: string;
  wallet: string;
  amount: number;
  currency: string;
  description: string;
  payer: string;
  payerEmail: string;
  successUrl: string;
  failureUrl: string;
  service: string;
  otp?: string;
  status: PayInStatus;
  transaction_reference: string | null;
  created_at: string;
}
