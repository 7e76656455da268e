import { allocateMinor, Money, MoneyError, parseRate, type CurrencyRule } from './money';

const XAF: CurrencyRule = { code: 'XAF', decimals: 0, maxAmount: '100000000' };
const EUR: CurrencyRule = { code: 'EUR', decimals: 2, maxAmount: '100000000' };

/** The reason of the MoneyError `fn` throws, or 'no error'. */
const reasonOf = (fn: () => unknown): string => {
  try {
    fn();
    return 'no error';
  } catch (error) {
    return error instanceof MoneyError ? error.reason : 'not a MoneyError';
  }
};

describe('allocate (largest remainder)', () => {
  const xaf = (s: string) => Money.parse(s, XAF);
  const sum = (shares: bigint[]) => shares.reduce((a, b) => a + b, 0n);

  it('10000 XAF at 33.33 / 33.33 / 33.34 sums exactly', () => {
    const shares = allocateMinor(xaf('10000').minor, ['33.33', '33.33', '33.34']);
    expect(shares).toEqual([3333n, 3333n, 3334n]);
    expect(sum(shares)).toBe(10000n);
  });

  it('gives nobody the part the rates do not cover', () => {
    expect(allocateMinor(xaf('100').minor, [33, 33, 33])).toEqual([33n, 33n, 33n]);
    expect(allocateMinor(xaf('100').minor, ['50'])).toEqual([50n]);
  });

  it('breaks ties deterministically by index', () => {
    expect(allocateMinor(xaf('1').minor, [50, 50])).toEqual([1n, 0n]);
    expect(allocateMinor(xaf('2').minor, ['33.3333', '33.3333', '33.3334'])).toEqual([1n, 0n, 1n]);
    expect(allocateMinor(xaf('1').minor, ['25', '25', '25', '25'])).toEqual([1n, 0n, 0n, 0n]);
    // A larger remainder wins over a lower index.
    expect(allocateMinor(xaf('100').minor, ['33.3333', '33.3334', '33.3333'])).toEqual([33n, 34n, 33n]);
    // 99.9999% of 100 is 99.9999: floored to 99, and the three shares sum to 99.
    expect(allocateMinor(xaf('100').minor, ['33.3333', '33.3333', '33.3333'])).toEqual([33n, 33n, 33n]);
  });

  it('gives the leftover units to the largest remainders', () => {
    // 10 at [15, 25, 60]: exact 1.5, 2.5, 6 → floors 1, 2, 6 (9); target 10 → index 0 (tie, lower index).
    expect(allocateMinor(xaf('10').minor, [15, 25, 60])).toEqual([2n, 2n, 6n]);
    // 10 at [14, 26, 60]: exact 1.4, 2.6, 6 → the unit goes to 2.6.
    expect(allocateMinor(xaf('10').minor, [14, 26, 60])).toEqual([1n, 3n, 6n]);
  });

  it('never exceeds floor(amount × sum of rates / 100) and reaches it exactly', () => {
    let seed = 12345;
    const random = (n: number) => {
      seed = (seed * 48271) % 2147483647;
      return seed % n;
    };
    for (let round = 0; round < 500; round += 1) {
      const amount = BigInt(random(10_000_000));
      const count = 1 + random(7);
      const raw = Array.from({ length: count }, () => 1 + random(Math.floor(1_000_000 / count)));
      const rates = raw.map((r) => `${Math.floor(r / 10000)}.${String(r % 10000).padStart(4, '0')}`);
      const rateSum = raw.reduce((a, b) => a + b, 0);
      const shares = allocateMinor(amount, rates);
      expect(sum(shares)).toBe((amount * BigInt(rateSum)) / 1_000_000n);
      for (const [i, share] of shares.entries()) {
        const exact = (amount * BigInt(raw[i])) / 1_000_000n;
        expect(share === exact || share === exact + 1n).toBe(true);
      }
    }
  });

  it('works on minor units of decimal currencies', () => {
    expect(allocateMinor(Money.parse('0.05', EUR).minor, [50, 50])).toEqual([3n, 2n]);
    expect(allocateMinor(Money.parse('100.00', EUR).minor, ['12.5', '87.5'])).toEqual([1250n, 8750n]);
  });

  it('refuses rates summing above 100 and bad rates', () => {
    expect(reasonOf(() => allocateMinor(xaf('100').minor, [50, 50.0001]))).toBe('rates_above_100');
    expect(reasonOf(() => allocateMinor(xaf('100').minor, ['60', '41']))).toBe('rates_above_100');
    expect(reasonOf(() => allocateMinor(xaf('100').minor, ['100']))).toBe('no error');
    expect(reasonOf(() => allocateMinor(xaf('100').minor, ['0']))).toBe('invalid_rate');
    expect(reasonOf(() => allocateMinor(xaf('100').minor, [-10]))).toBe('invalid_rate');
    expect(reasonOf(() => allocateMinor(xaf('100').minor, ['33.33333']))).toBe('invalid_rate');
    expect(reasonOf(() => allocateMinor(xaf('100').minor, ['100.0001']))).toBe('invalid_rate');
    expect(reasonOf(() => allocateMinor(xaf('100').minor, ['1e1']))).toBe('invalid_rate');
    expect(reasonOf(() => allocateMinor(xaf('100').minor, [NaN]))).toBe('invalid_rate');
    expect(allocateMinor(xaf('100').minor, [])).toEqual([]);
  });

  it('refuses a negative amount', () => {
    expect(reasonOf(() => allocateMinor(-1n, [50]))).toBe('not_positive');
    expect(allocateMinor(0n, [50, 50])).toEqual([0n, 0n]);
  });

  it('parseRate is in ten-thousandths of a percent', () => {
    expect(parseRate('33.33')).toBe(333300n);
    expect(parseRate(33.3333)).toBe(333333n);
    expect(parseRate('100')).toBe(1000000n);
    expect(parseRate('0.0001')).toBe(1n);
  });
});
