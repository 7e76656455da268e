/** What the sandbox keeps of wallet links and distributions. */

export interface WalletLink {
  email: string;
  phone: string;
  phoneCountry: string;
  apikey: string;
  matricule: string;
  created_at: string;
}

export interface DistributionEntry {
  matricule: string;
  rate: number;
}

export interface LinkInit {
  payment_receiver: string;
  payment_id: string;
  amount: number;
  distribution: DistributionEntry[];
  created_at: string;
}

export interface FiatDistribution {
  id: string;
  payer: string;
  currency: string;
  amount: number;
  distribution: DistributionEntry[];
  created_at: string;
}
