/** What the sandbox keeps of card users, cards and their transactions (minor units as bigint). */

import type { CardUserBody } from '../provider/provider.types';

/** The create body's required fields, as the provider's own wire type names them (one definition of the shape). */
type RequiredCardUserField = 'first_name' | 'last_name' | 'email' | 'country_code' | 'contact' | 'dob' | 'is_business';

/** A card user as the sandbox keeps it: the body's fields (the optional ones null when absent), its ids, its cards. */
export type CardUser = Pick<CardUserBody, RequiredCardUserField> & {
  [Field in Exclude<keyof CardUserBody, RequiredCardUserField>]: CardUserBody[Field] | null;
} & {
  user_id: string;
  reference: string;
  cards: string[];
  created_at: string;
};

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
