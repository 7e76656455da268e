import type { FieldError } from '../common/domain-error';
import { trimEnd } from '../common/decimal-text';
import { allocateMinor, parseRate, RATE_DECIMALS } from '../common/money';

/**
 * The arithmetic of a redistribution, exact and deterministic: rates are read as decimals
 * (ten-thousandths of a percent as bigint), shares are computed in the currency's minor units by
 * the largest-remainder method (`allocateMinor`), and what the shares leave of the amount is the
 * remainder (the payment receiver's part of an `init`). No floating-point arithmetic.
 */

const RATE_SCALE = 10n ** BigInt(RATE_DECIMALS);
export const WHOLE_PERCENT = 100n * RATE_SCALE;

export interface ComputedShares {
  /** One per beneficiary, in the order given: non-negative minor units. */
  shares: bigint[];
  /** amount − sum(shares): never negative. */
  remainder: bigint;
}

export function computeShares(amountMinor: bigint, rates: readonly (string | number)[]): ComputedShares {
  const shares = allocateMinor(amountMinor, rates);
  const total = shares.reduce((sum, share) => sum + share, 0n);
  return { shares, remainder: amountMinor - total };
}

/** Canonical decimal of a valid rate: "33.33" for 33.33, "33.3300" or "033.33"; "50" for 50.0. */
export function canonicalRate(rate: string | number): string {
  const scaled = parseRate(rate);
  const int = (scaled / RATE_SCALE).toString();
  const frac = trimEnd((scaled % RATE_SCALE).toString().padStart(RATE_DECIMALS, '0'), '0');
  return frac ? `${int}.${frac}` : int;
}

/** The JSON number the provider gets for a rate, proved to print as exactly the canonical decimal. */
export function rateToProviderNumber(rate: string | number): number {
  const canonical = canonicalRate(rate);
  const value = Number(canonical);
  // At most 3 integer and 4 decimal digits: always exact, checked anyway.
  if (String(value) !== canonical) throw new Error(`rate ${canonical} cannot be sent exactly as a JSON number`);
  return value;
}

/**
 * Rules across the list that per-entry validation cannot see: each matricule once (the later
 * occurrence is the one reported, `distribution[i].matricule`) and a sum of rates of at most 100
 * (reported on `distribution`). Entries are assumed individually valid.
 */
export function distributionListErrors(
  entries: readonly { matricule: string; rate: string | number }[],
  field = 'distribution',
): FieldError[] {
  const errors: FieldError[] = [];
  if (entries.length === 0) return [{ field, message: `${field} must list at least one beneficiary` }];
  const seen = new Map<string, number>();
  let sum = 0n;
  entries.forEach((entry, index) => {
    const first = seen.get(entry.matricule);
    if (first !== undefined)
      errors.push({ field: `${field}[${index}].matricule`, message: `matricule ${entry.matricule} already appears at ${field}[${first}]` });
    else seen.set(entry.matricule, index);
    sum += parseRate(entry.rate);
  });
  if (sum > WHOLE_PERCENT) {
    errors.push({ field, message: `the rates sum to ${formatScaled(sum)}; they must sum to at most 100` });
  }
  return errors;
}

function formatScaled(scaled: bigint): string {
  const frac = trimEnd((scaled % RATE_SCALE).toString().padStart(RATE_DECIMALS, '0'), '0');
  return frac ? `${scaled / RATE_SCALE}.${frac}` : String(scaled / RATE_SCALE);
}
