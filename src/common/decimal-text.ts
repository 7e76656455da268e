/**
 * Decimal text split into digits, without floating point: what a request or the database wrote,
 * read exactly, before any currency rule applies (those are `Money`'s, in money.ts).
 */

/** Why an amount, a rate or a stored decimal was refused (`MoneyError.reason`). */
export type MoneyErrorReason =
  | 'not_a_number'
  | 'too_long'
  | 'not_finite'
  | 'not_positive'
  | 'too_many_decimals'
  | 'above_maximum'
  | 'unknown_currency'
  | 'not_representable'
  | 'currency_mismatch'
  | 'invalid_rate'
  | 'rates_above_100';

/**
 * The longest decimal text read at all: more than any amount, rate or stored decimal needs. Longer
 * text is refused before any pattern sees it, so the cost of a refusal never grows with the input.
 */
export const MAX_DECIMAL_TEXT_LENGTH = 40;

export const PLAIN_DECIMAL = /^\d+(\.\d+)?$/;
const NEGATIVE_DECIMAL = /^-\d+(\.\d+)?$/;
const INFINITY_TEXT = /^[+-]?Infinity$/;
/** Shortest round-trip form of a double, or decimal.js' toString(): optional sign and exponent. */
const DECIMAL_WITH_EXPONENT = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/** Exponents beyond this are not amounts; refusing them bounds the work of the expansion. */
const MAX_EXPONENT = 400;

/** A decimal split into digits: `negative`, integer digits and fraction digits (both normalised). */
export interface DecimalParts {
  negative: boolean;
  /** Integer digits without leading zeros ('' for zero). */
  int: string;
  /** Fraction digits without trailing zeros ('' for a whole number). */
  frac: string;
}

export type AmountCheck = { ok: true; parts: DecimalParts } | { ok: false; reason: MoneyErrorReason };

/** `text` without its leading `char`s; one pass, whatever the text (no backtracking pattern). */
export function trimStart(text: string, char: string): string {
  let start = 0;
  while (start < text.length && text[start] === char) start++;
  return text.slice(start);
}

/** `text` without its trailing `char`s; one pass (`/0+$/` is quadratic on a long run of zeros). */
export function trimEnd(text: string, char: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === char) end--;
  return text.slice(0, end);
}

function normalise(negative: boolean, int: string, frac: string): DecimalParts {
  return { negative, int: trimStart(int, '0'), frac: trimEnd(frac, '0') };
}

/** Exact expansion of `digits` x 10^exponent with `int.frac` digits; no arithmetic on floats. */
function expand(negative: boolean, int: string, frac: string, exponent: number): DecimalParts {
  if (exponent === 0) return normalise(negative, int, frac);
  const digits = int + frac;
  const point = int.length + exponent;
  if (point <= 0) return normalise(negative, '', '0'.repeat(-point) + digits);
  if (point >= digits.length) return normalise(negative, digits + '0'.repeat(point - digits.length), '');
  return normalise(negative, digits.slice(0, point), digits.slice(point));
}

/** Parses an optionally signed decimal with an optional exponent; null when it is none. */
export function parseExponentDecimal(text: string): DecimalParts | null {
  if (text.length > MAX_DECIMAL_TEXT_LENGTH) return null;
  const match = DECIMAL_WITH_EXPONENT.exec(text);
  if (!match) return null;
  const exponent = match[4] === undefined ? 0 : Number.parseInt(match[4], 10);
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > MAX_EXPONENT) return null;
  return expand(match[1] === '-', match[2], match[3] ?? '', exponent);
}

function isZero(parts: DecimalParts): boolean {
  return parts.int === '' && parts.frac === '';
}

/**
 * The currency-independent half of the rules: syntax, finiteness, sign and zero. Shared by
 * `Money.parse` and the `@IsMoneyAmount()` decorator so both refuse these inputs for the same
 * reasons. The decimals, the maximum and the 15 significant digits of a JSON number are checked
 * by `Money.parse` (in that order, so 0.30000000000000004 EUR is refused for its decimals).
 */
export function checkAmountInput(input: unknown): AmountCheck {
  if (typeof input === 'string') {
    if (input.length > MAX_DECIMAL_TEXT_LENGTH) return { ok: false, reason: 'too_long' };
    const text = input.trim();
    if (PLAIN_DECIMAL.test(text)) {
      const [int, frac = ''] = text.split('.');
      const parts = normalise(false, int, frac);
      return isZero(parts) ? { ok: false, reason: 'not_positive' } : { ok: true, parts };
    }
    if (NEGATIVE_DECIMAL.test(text)) return { ok: false, reason: 'not_positive' };
    if (INFINITY_TEXT.test(text)) return { ok: false, reason: 'not_finite' };
    return { ok: false, reason: 'not_a_number' };
  }
  if (typeof input === 'number') {
    if (Number.isNaN(input)) return { ok: false, reason: 'not_a_number' };
    if (!Number.isFinite(input)) return { ok: false, reason: 'not_finite' };
    if (input <= 0) return { ok: false, reason: 'not_positive' };
    // The shortest decimal that round-trips to this double: how the client most plausibly wrote it.
    const parts = parseExponentDecimal(String(input));
    if (parts === null) return { ok: false, reason: 'not_a_number' };
    return { ok: true, parts };
  }
  return { ok: false, reason: 'not_a_number' };
}

/** Significant digits of a decimal: from the first non-zero digit to the last non-zero digit. */
export function significantDigits(parts: DecimalParts): number {
  return trimEnd(trimStart(parts.int + parts.frac, '0'), '0').length;
}

/** Minor units of a decimal, refusing a non-zero digit beyond `decimals` (never rounds). */
export function toMinor(parts: DecimalParts, decimals: number): bigint | MoneyErrorReason {
  if (parts.frac.length > decimals) return 'too_many_decimals';
  const magnitude = BigInt((parts.int || '0') + parts.frac.padEnd(decimals, '0'));
  return parts.negative ? -magnitude : magnitude;
}
