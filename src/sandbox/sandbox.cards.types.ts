/** What the sandbox keeps of card users, cards and their transactions (minor units as bigint). */

export interface CardUser {
  user_id: string;
  reference: string;
  first_name: string;
  last_name: string;
  email: string;
  country_code: string;
  contact: string;
  dob: string;
  is_business: boolean;
  billing_adress: string | null;
  billing_city: string | null;
  billing_country: string | null;
  id_number: string | null;
  business_name: string | null;
  billing_state: string | null;
  billing_postal_code: string | null;
  cards: string[];
  created_at: string;
}

export type CardStatus = 'active' | 'disabled' | 'terminated';

export interface CardTransaction {
  transaction_id: string;
  type: 'topup' | 'withdraw';
  amountMinor: bigint;
  balanceAfterMinor: bigint;
  created_at: string;
}

export interface Card {
  card_id: string;
  user_id: string;
  card_number: string;
  expiry: string;
  cvv: string;
  currency: string;
  decimals: number;
  balanceMinor: bigint;
  status: CardStatus;
  transactions: CardTransaction[];
  created_at: string;
}
