import { Money, readStoredAmount, type CurrencyRule } from '../common/money';
import type { AppConfig } from '../config/app-config';
import { canonicalRate } from './distribution-shares';
import type { DistributionRecord } from './distribution.types';
import type { DistributionDto } from './distributions.dto';

/** What the answer of a distribution is made from: its record without what the provider exchanged. */
export type DistributionDtoSource = Omit<DistributionRecord, 'providerRequest' | 'providerResponse'>;

/** A distribution as the API answers it (GET /v1/distributions/{id}, the list, the webhook events). */
export function toDistributionDto(distribution: DistributionDtoSource, currencies: AppConfig['currencies']): DistributionDto {
  const rule = distributionCurrencyRule(distribution.currency, currencies);
  const amount = readStoredAmount(distribution.amount, rule);
  const allocated = distribution.shares.reduce((sum, share) => sum + share.shareMinor, 0n);
  return {
    id: distribution.id,
    kind: distribution.kind,
    status: distribution.status,
    paymentReceiver: distribution.paymentReceiver,
    paymentId: distribution.paymentId,
    payer: distribution.payer,
    amount: amount.toString(),
    currency: distribution.currency,
    distribution: distribution.shares.map((share) => ({
      position: share.position,
      matricule: share.matricule,
      rate: canonicalRate(share.rate),
      share: Money.fromMinor(share.shareMinor, rule).toString(),
    })),
    remainder: Money.fromMinor(distribution.receiverShareMinor ?? amount.minor - allocated, rule).toString(),
    providerMessage: distribution.providerMessage,
    failureReason: distribution.failureReason,
    createdBy: distribution.createdBy,
    createdAt: distribution.createdAt.toISOString(),
    completedAt: distribution.completedAt ? distribution.completedAt.toISOString() : null,
  };
}

/** The configured rule; for a currency no longer configured, its ISO 4217 minor units. */
export function distributionCurrencyRule(code: string, currencies: AppConfig['currencies']): CurrencyRule {
  const configured = currencies[code];
  if (configured) return configured;
  let decimals = 2;
  try {
    decimals = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    // not an ISO code Intl knows: two decimals
  }
  return { code, decimals, maxAmount: '0' };
}
