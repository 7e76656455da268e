/** Domain shapes of the wallet-links area; Prisma's types stay inside the repository. */

export interface WalletLinkRecord {
  id: string;
  ownerId: string;
  email: string;
  phone: string;
  phoneCountry: string;
  matricule: string;
  /** `SecretBox` text (AES-256-GCM); the clear apikey never leaves the service. */
  apikeyEncrypted: string;
  createdAt: Date;
}

/** What a request claims before the provider is asked. */
export interface WalletLinkClaim {
  ownerId: string;
  email: string;
  phone: string;
  phoneCountry: string;
}

/** What the provider's answer adds to a claim. */
export interface LinkedWallet {
  matricule: string;
  apikeyEncrypted: string;
}

export interface WalletLinkFilter {
  ownerId?: string;
}

/** Associated data of a stored apikey: binds the ciphertext to its matricule (no swapping between rows). */
export function apikeyPurpose(matricule: string): string {
  return `wallet-link-apikey:${matricule}`;
}
