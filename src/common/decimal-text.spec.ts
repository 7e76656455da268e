import fc from 'fast-check';
import { checkAmountInput, MAX_DECIMAL_TEXT_LENGTH, parseExponentDecimal, significantDigits, trimEnd, trimStart } from './decimal-text';
import { Money, MoneyError, parseRate, type CurrencyRule } from './money';
import { validateAmountForCurrency } from './money.validator';

const XAF: CurrencyRule = { code: 'XAF', decimals: 0, maxAmount: '100000000' };
const EUR: CurrencyRule = { code: 'EUR', decimals: 2, maxAmount: '100000000' };

/** Milliseconds `work` takes. */
function timed(work: () => unknown): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}

/** Every reader of decimal text a request reaches, each swallowing its refusal. */
const READERS: Array<[string, (text: string) => unknown]> = [
  ['checkAmountInput', (text) => checkAmountInput(text)],
  ['parseExponentDecimal', (text) => parseExponentDecimal(text)],
  ['Money.parse XAF', (text) => validateAmountForCurrency(text, 'XAF', { XAF })],
  ['Money.parse EUR', (text) => validateAmountForCurrency(text, 'EUR', { EUR })],
  [
    'parseRate',
    (text) => {
      try {
        return parseRate(text);
      } catch (error) {
        if (error instanceof MoneyError) return error.reason;
        throw error;
      }
    },
  ],
];

/**
 * The shape of hostile decimal text: long runs of one character between short heads and tails, the shapes
 * that make a backtracking pattern quadratic ('1.' + zeros + '1', digits then a rejecting suffix).
 */
const hostileDecimal = fc.record({
  head: fc.constantFrom('1.', '0.', ' 1.', '1', '', '-1.'),
  run: fc.constantFrom('0', '0', '9', '.', ' '),
  length: fc.integer({ min: 20_000, max: 100_000 }),
  tail: fc.constantFrom('1', '1 ', 'x', '', 'e5'),
});

describe('decimal text: cost linear in the input, bounded before any pattern', () => {
  // A complexity class, not a speed: linear reads take about a millisecond here, the quadratic trim
  // took seconds, so the bound leaves room for a GC pause on a loaded machine.
  const MAX_MS = 250;

  it('refuses "1." + 100,000 zeros + "1" at once, for its length', () => {
    const text = '1.' + '0'.repeat(100_000) + '1';
    for (const [name, read] of READERS) expect([name, timed(() => read(text)) < MAX_MS]).toEqual([name, true]);
    expect(checkAmountInput(text)).toEqual({ ok: false, reason: 'too_long' });
    expect(validateAmountForCurrency(text, 'XAF', { XAF })).toEqual({
      errors: [{ field: 'amount', message: `amount must be a decimal of at most ${MAX_DECIMAL_TEXT_LENGTH} characters` }],
    });
  });

  it('reads any hostile text of any length in bounded time', () => {
    fc.assert(
      // The text is built here so that a counterexample prints as its shape, not as 100,000 characters.
      fc.property(hostileDecimal, ({ head, run, length, tail }) => {
        const text = head + run.repeat(length) + tail;
        for (const [, read] of READERS) expect(timed(() => read(text))).toBeLessThan(MAX_MS);
      }),
      // No shrinking: on a quadratic reader each failing case costs seconds.
      { numRuns: 40, endOnFailure: true },
    );
  });

  it('accepts 40 characters and refuses 41', () => {
    const forty = '1.' + '0'.repeat(37) + '1';
    expect(forty).toHaveLength(40);
    expect(checkAmountInput(forty)).toMatchObject({ ok: true, parts: { int: '1', frac: '0'.repeat(37) + '1' } });
    expect(checkAmountInput(forty + '0')).toEqual({ ok: false, reason: 'too_long' });
    expect(parseExponentDecimal(forty + '0')).toBeNull();
  });

  it('trims runs of any length in one pass', () => {
    const zeros = '0'.repeat(1_000_000);
    expect(timed(() => trimEnd('1' + zeros + 'x', '0'))).toBeLessThan(MAX_MS);
    expect(trimEnd('10' + zeros, '0')).toBe('1');
    expect(trimStart(zeros + '1' + zeros, '0')).toBe('1' + zeros);
    expect(trimEnd(zeros, '0')).toBe('');
    expect(trimStart('', '0')).toBe('');
  });
});

/** The exact value of a plain decimal (`^\d+(\.\d+)?$`) as a fraction numerator / 10^scale, by BigInt. */
function valueOf(text: string): { numerator: bigint; scale: number } {
  const [int, frac = ''] = text.split('.');
  return { numerator: BigInt(int + frac), scale: frac.length };
}

const sameValue = (a: { numerator: bigint; scale: number }, b: { numerator: bigint; scale: number }) =>
  a.numerator * 10n ** BigInt(b.scale) === b.numerator * 10n ** BigInt(a.scale);

const plainDecimal = fc
  .tuple(fc.stringMatching(/^\d{1,20}$/), fc.option(fc.stringMatching(/^\d{1,18}$/), { nil: undefined }))
  .map(([int, frac]) => (frac === undefined ? int : `${int}.${frac}`));

describe('decimal text: exact', () => {
  it('splits any plain decimal into digits of exactly its value', () => {
    fc.assert(
      fc.property(plainDecimal, (text) => {
        const checked = checkAmountInput(` ${text} `);
        const zero = valueOf(text).numerator === 0n;
        if (zero) return expect(checked).toEqual({ ok: false, reason: 'not_positive' });
        if (!checked.ok) throw new Error(`refused ${text}: ${checked.reason}`);
        const { int, frac } = checked.parts;
        expect(int.startsWith('0') || frac.endsWith('0')).toBe(false);
        expect(sameValue(valueOf(`${int || '0'}${frac ? `.${frac}` : ''}`), valueOf(text))).toBe(true);
        expect(significantDigits(checked.parts)).toBe(trimEnd(trimStart(int + frac, '0'), '0').length);
      }),
    );
  });

  it('never rounds: an amount is accepted exactly or refused', () => {
    fc.assert(
      fc.property(plainDecimal, fc.constantFrom(XAF, EUR), (text, rule) => {
        let money: Money;
        try {
          money = Money.parse(text, rule);
        } catch (error) {
          expect(error).toBeInstanceOf(MoneyError);
          return;
        }
        expect(sameValue(valueOf(money.toString()), valueOf(text))).toBe(true);
      }),
    );
  });
});
