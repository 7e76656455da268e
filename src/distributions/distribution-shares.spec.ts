import fc from 'fast-check';
import { trimEnd } from '../common/decimal-text';
import { Money } from '../common/money';
import type { CurrencyRule } from '../config/app-config';
import { canonicalRate, computeShares, distributionListErrors, rateToProviderNumber, WHOLE_PERCENT } from './distribution-shares';

const CURRENCIES: CurrencyRule[] = [
  { code: 'XAF', decimals: 0, maxAmount: '1000000000000000' },
  { code: 'EUR', decimals: 2, maxAmount: '10000000000000' },
  { code: 'KWD', decimals: 3, maxAmount: '1000000000000' },
];

/** A rate in ten-thousandths of a percent, written as a decimal string or a JSON number, as a client may. */
const scaledToText = (scaled: number) => {
  const int = Math.floor(scaled / 10_000);
  const frac = trimEnd(String(scaled % 10_000).padStart(4, '0'), '0');
  return frac ? `${int}.${frac}` : String(int);
};
const rateList = fc
  .array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 30 })
  .filter((scaled) => scaled.reduce((a, b) => a + b, 0) <= 1_000_000);
const request = fc.record({
  currency: fc.constantFrom(...CURRENCIES),
  minor: fc.bigInt({ min: 1n, max: 10n ** 15n }),
  scaled: rateList,
  asNumbers: fc.boolean(),
});

/** The amount goes through the same parsing as a request: a decimal string of the currency. */
function amountOf(currency: CurrencyRule, minor: bigint): Money {
  return Money.parse(Money.fromMinor(minor, currency).toString(), currency);
}

describe('distribution shares (properties)', () => {
  it('are non-negative integers in minor units, one per beneficiary, summing to at most the amount', () => {
    fc.assert(
      fc.property(request, ({ currency, minor, scaled, asNumbers }) => {
        const rates = scaled.map((s) => (asNumbers ? Number(scaledToText(s)) : scaledToText(s)));
        const { shares, remainder } = computeShares(amountOf(currency, minor).minor, rates);
        expect(shares).toHaveLength(rates.length);
        for (const share of shares) {
          expect(typeof share).toBe('bigint');
          expect(share >= 0n).toBe(true);
        }
        const total = shares.reduce((a, b) => a + b, 0n);
        expect(total <= minor).toBe(true);
        expect(remainder).toBe(minor - total);
        // Largest remainder: the shares give out exactly floor(amount × sum(rates) / 100), all of it at 100.
        const rateSum = scaled.reduce((a, b) => a + BigInt(b), 0n);
        expect(total).toBe((minor * rateSum) / WHOLE_PERCENT);
      }),
      { numRuns: 500 },
    );
  });

  it('each equals its exact proportional value rounded by less than one minor unit', () => {
    fc.assert(
      fc.property(request, ({ currency, minor, scaled }) => {
        const { shares } = computeShares(amountOf(currency, minor).minor, scaled.map(scaledToText));
        shares.forEach((share, i) => {
          // |share − amount × rate / 100| < 1, compared exactly in ten-thousandths of a percent.
          const exactScaled = minor * BigInt(scaled[i]);
          const diff = share * WHOLE_PERCENT - exactScaled;
          expect(diff > -WHOLE_PERCENT && diff < WHOLE_PERCENT).toBe(true);
          // And never below the floor: rounding only ever adds the unit a largest remainder earned.
          expect(share).toBeGreaterThanOrEqual(exactScaled / WHOLE_PERCENT);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('are identical for identical input, whether the rates came as strings or numbers', () => {
    fc.assert(
      fc.property(request, ({ currency, minor, scaled }) => {
        const amount = amountOf(currency, minor).minor;
        const first = computeShares(amount, scaled.map(scaledToText));
        const again = computeShares(amount, scaled.map(scaledToText));
        const numbers = computeShares(
          amount,
          scaled.map((s) => Number(scaledToText(s))),
        );
        expect(again).toEqual(first);
        expect(numbers).toEqual(first);
      }),
      { numRuns: 300 },
    );
  });

  it('rates reach the provider as JSON numbers that print as exactly the decimal given', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), (scaled) => {
        const text = scaledToText(scaled);
        expect(canonicalRate(text)).toBe(text);
        expect(String(rateToProviderNumber(text))).toBe(text);
        expect(canonicalRate(`0${text}`)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });
});

describe('distribution shares (cases)', () => {
  const xaf = CURRENCIES[0];
  const eur = CURRENCIES[1];

  it('10000 XAF at 33.33/33.33/33.34 is 3333/3333/3334: the whole amount', () => {
    expect(computeShares(Money.parse('10000', xaf).minor, ['33.33', '33.33', '33.34'])).toEqual({
      shares: [3333n, 3333n, 3334n],
      remainder: 0n,
    });
  });

  it('100 XAF at 33/33/33 is 33/33/33, 1 left over for the receiver', () => {
    expect(computeShares(Money.parse('100', xaf).minor, [33, 33, 33])).toEqual({ shares: [33n, 33n, 33n], remainder: 1n });
  });

  it('1 XAF at 50/50 goes to the first (ties to the lower position), every time', () => {
    for (let i = 0; i < 3; i++) expect(computeShares(1n, ['50', '50'])).toEqual({ shares: [1n, 0n], remainder: 0n });
  });

  it('EUR with cents: 100.01 at 50/50 is 50.01/50.00; 0.03 at 33.3333 ×3 (99.9999 %) is 0.01/0.01/0.00', () => {
    expect(computeShares(Money.parse('100.01', eur).minor, ['50', '50']).shares).toEqual([5001n, 5000n]);
    expect(computeShares(Money.parse('0.03', eur).minor, ['33.3333', '33.3333', '33.3333'])).toEqual({
      shares: [1n, 1n, 0n],
      remainder: 1n,
    });
  });

  it('canonical rates drop useless zeros', () => {
    expect(canonicalRate('033.3300')).toBe('33.33');
    expect(canonicalRate(50.0)).toBe('50');
    expect(canonicalRate('0.0001')).toBe('0.0001');
    expect(rateToProviderNumber('33.3300')).toBe(33.33);
  });

  it('list rules: each matricule once (the repeat is named), rates sum to at most 100, at least one beneficiary', () => {
    expect(
      distributionListErrors([
        { matricule: 'A', rate: '50' },
        { matricule: 'B', rate: '50' },
      ]),
    ).toEqual([]);
    expect(
      distributionListErrors([
        { matricule: 'A', rate: '10' },
        { matricule: 'A', rate: '10' },
      ]),
    ).toEqual([{ field: 'distribution[1].matricule', message: 'matricule A already appears at distribution[0]' }]);
    expect(
      distributionListErrors([
        { matricule: 'A', rate: '50' },
        { matricule: 'B', rate: '50.01' },
      ]),
    ).toEqual([{ field: 'distribution', message: 'the rates sum to 100.01; they must sum to at most 100' }]);
    expect(distributionListErrors([])).toEqual([{ field: 'distribution', message: 'distribution must list at least one beneficiary' }]);
  });
});
