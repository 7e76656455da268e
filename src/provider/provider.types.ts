/** Wire shapes of the provider, exactly as provider-api.md describes them (snake_case stays here). */

export interface TokenResponse {
  token: string;
  data: { expireAt: string };
}

export interface PayinTransaction {
  operation: string;
  reference: string;
  external_reference: string;
  transaction_reference: string | null;
  transaction_category: string;
  transaction_channel: string;
  amount: string;
  currency: string;
}

export interface PayinEnvelope {
  success: boolean;
  code: number;
  /** 'PROCESSING' or 'FAILURE' as documented; any other text is possible. */
  status: string;
  created_at: string;
  data: PayinTransaction;
  message: string;
}

export interface PayinRequestBody {
  wallet: string;
  amount: number;
  currency: string;
  order_id: string;
  description: string;
  payer: string;
  payerEmail: string;
  successUrl: string;
  failureUrl: string;
}

export interface PayinHeaders {
  service: number;
  /** Digits, sent as given: a one-time code may start with 0, which a number would lose. */
  otp?: string;
}

export interface CardUserBody {
  first_name: string;
  last_name: string;
  email: string;
  country_code: string;
  contact: string;
  dob: string;
  is_business: boolean;
  billing_adress: string;
  billing_city: string;
  billing_country: string;
  id_number: string;
  business_name: string;
  billing_state: string;
  billing_postal_code: string;
}

export interface CardUserCreated {
  user_id: string;
  reference: string;
}

export interface CardUserDetails {
  user_id: string;
  first_name: string;
  last_name: string;
  email: string;
  cards: string[];
  [field: string]: unknown;
}

export interface CardCreated {
  card_id: string;
  card_number: string;
  expiry: string;
  cvv: string;
}

export interface CardDetails {
  card_id: string;
  card_number: string;
  expiry: string;
  balance: string;
  currency: string;
  status: string;
}

export type CardOperation = 'topup' | 'withdraw' | 'disabled' | 'enabled' | 'transactions' | 'terminate';

export interface CardBalanceOperationResult {
  new_balance: string;
  transaction_id: string;
}

export interface DistributionEntry {
  matricule: string;
  rate: number;
}

export interface InitDistributionBody {
  payment_receiver: string;
  payment_id: string;
  amount: number;
  distribution: DistributionEntry[];
}

export interface FiatDistributionBody {
  data: { payer: string; currency: string; amount: number; distribution: DistributionEntry[] };
}

export interface SuccessMessage {
  success: true;
  message: string;
}

export interface WalletLinkQuery {
  email: string;
  phone: string;
  phoneCountry: string;
}

export interface WalletLinkResponse {
  success: true;
  data: { apikey: string; matricule: string };
  message: string;
}
