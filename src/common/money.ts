import {
  checkAmountInput,
  type MoneyErrorReason,
  MAX_DECIMAL_TEXT_LENGTH,
  parseExponentDecimal,
  PLAIN_DECIMAL,
  significantDigits,
  toMinor,
  trimEnd,
  trimStart,
} from './decimal-text';
import { DomainError } from './domain-error';

/**
 * Exact money. Amounts are decimal strings at the edges and `bigint` minor units inside; no
 * floating-point arithmetic happens anywhere in this file. The only `Number()` call turns the
 * canonical decimal into the JSON number the provider wants, and only after proving that the
 * number prints back as exactly the same decimal (`toProviderNumber`).
 *
 * Accepted input (`Money.parse`, what a request may carry):
 * - decimal text of at most 40 characters (`MAX_DECIMAL_TEXT_LENGTH`, 'too_long'): checked before
 *   any pattern reads it. A JSON number whose text was not exactly its double's value arrives as
 *   that text (the body parser's `checkedJsonText`), so it is judged as a string.
 * - a string, trimmed, matching `^\d+(\.\d+)?$`: no sign, no '+', no exponent, no hex, no inner
 *   space, no '.5' or '5.'. Leading zeros are harmless and dropped ('007' is 7).
 * - a JSON number, judged by its shortest round-trip decimal (`String(n)`). Exponent forms
 *   (`String(1e21) === '1e+21'`, `String(1e-7) === '1e-7'`) are expanded exactly and judged by
 *   value, so they are refused for the precise reason: 1e21 is above any configured maximum and
 *   1e-7 has more decimals than any currency allows. A number whose shortest form has more than
 *   15 significant digits is refused (`not_representable`): past 15 digits a double no longer
 *   tells which decimal the client wrote (100000000000000.01 prints as 100000000000000.02), and
 *   a client needing that many digits must send a string.
 * - trailing zeros beyond the currency's precision are accepted because they do not change the
 *   value: '12.5' and '12.50' are EUR 12.50, '1500.0' and '1500.000' are XAF 1500. Only a
 *   non-zero digit beyond the precision is refused (`too_many_decimals`): nothing is ever rounded.
 * - zero and negative amounts are refused (`not_positive`), and so is anything above the
 *   currency's `maxAmount` (`above_maximum`); exactly the maximum is accepted.
 *
 * A `Money` built by arithmetic (`plus`, `minus`), `fromMinor` or `parseStoredDecimal` may be zero
 * or negative and may exceed the maximum (a report total, a balance): the positivity and maximum
 * rules are rules about what a request may ask for, not invariants of an amount.
 */

/** A currency this service accepts: ISO 4217 code, minor-unit digits and the largest amount, as a decimal string. */
export interface CurrencyRule {
  code: string;
  decimals: number;
  maxAmount: string;
}

export type { MoneyErrorReason };

export class MoneyError extends Error {
  constructor(
    readonly reason: MoneyErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'MoneyError';
  }
}

/** Digits a double reliably carries: any decimal with at most 15 significant digits round-trips. */
export const MAX_NUMBER_SIGNIFICANT_DIGITS = 15;
/** Percentage rates carry at most this many decimals (e.g. 33.3333). */
export const RATE_DECIMALS = 4;

function checkRule(rule: CurrencyRule): void {
  if (!Number.isInteger(rule.decimals) || rule.decimals < 0 || rule.decimals > 18) {
    throw new Error(`Currency ${rule.code}: decimals must be an integer between 0 and 18 (got ${rule.decimals})`);
  }
}

/** The rule's maximum in minor units; a misconfigured maximum is a programming error, not input. */
function maxMinorOf(rule: CurrencyRule): bigint {
  const parts =
    typeof rule.maxAmount === 'string' && PLAIN_DECIMAL.test(rule.maxAmount.trim()) ? parseExponentDecimal(rule.maxAmount.trim()) : null;
  const minor = parts === null ? 'not_a_number' : toMinor(parts, rule.decimals);
  if (typeof minor !== 'bigint')
    throw new Error(`Currency ${rule.code}: maxAmount "${rule.maxAmount}" is not a plain decimal within ${rule.decimals} decimals`);
  return minor;
}

/**
 * The field message for a refusal (what the API answers in `errors[].message`). `rule` is only
 * needed for the currency-dependent reasons; without it they fall back to the generic message.
 */
export function moneyErrorMessage(reason: MoneyErrorReason, rule?: CurrencyRule, field = 'amount'): string {
  switch (reason) {
    case 'not_a_number':
      return `${field} must be a positive decimal number, as a string or a number`;
    case 'too_long':
      return `${field} must be a decimal of at most ${MAX_DECIMAL_TEXT_LENGTH} characters`;
    case 'not_finite':
      return `${field} must be a finite number`;
    case 'not_positive':
      return `${field} must be greater than zero`;
    case 'too_many_decimals':
      if (!rule) return `${field} has too many decimals`;
      return rule.decimals === 0 ? `${rule.code} allows no decimals` : `${rule.code} allows at most ${rule.decimals} decimals`;
    case 'above_maximum':
      if (!rule) return `${field} is above the maximum`;
      return `${field} must not exceed ${rule.maxAmount} ${rule.code}`;
    case 'not_representable':
      return `${field} has more than ${MAX_NUMBER_SIGNIFICANT_DIGITS} significant digits; send it as a string`;
    case 'unknown_currency':
      return `currency must be one of the accepted currencies`;
    case 'currency_mismatch':
    case 'invalid_rate':
    case 'rates_above_100':
    default:
      return `${field} is invalid`;
  }
}

/** Canonical decimal of `minor` with `decimals` digits after the point ('1500', '12.50', '-0.05'). */
function formatMinor(minor: bigint, decimals: number): string {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(decimals + 1, '0');
  const int = digits.slice(0, digits.length - decimals);
  const text = decimals === 0 ? int : `${int}.${digits.slice(digits.length - decimals)}`;
  return negative ? `-${text}` : text;
}

export class Money {
  private constructor(
    /** The amount in the currency's minor units (cents for EUR, units for XAF). */
    readonly minor: bigint,
    /** ISO 4217 code. */
    readonly currency: string,
    /** Minor-unit digits of the currency. */
    readonly decimals: number,
  ) {
    Object.freeze(this);
  }

  /** An amount a request asked for: positive, within the currency's decimals and maximum. */
  static parse(input: unknown, rule: CurrencyRule): Money {
    checkRule(rule);
    const checked = checkAmountInput(input);
    if (!checked.ok) throw new MoneyError(checked.reason, moneyErrorMessage(checked.reason, rule));
    const { parts } = checked;
    if (parts.frac.length > rule.decimals) throw new MoneyError('too_many_decimals', moneyErrorMessage('too_many_decimals', rule));
    const maxMinor = maxMinorOf(rule);
    // Compare lengths first: a megabyte of digits is refused without building a megabyte bigint.
    const minorDigits = trimStart(parts.int + parts.frac.padEnd(rule.decimals, '0'), '0');
    if (minorDigits.length > maxMinor.toString().length) throw new MoneyError('above_maximum', moneyErrorMessage('above_maximum', rule));
    const minor = toMinor(parts, rule.decimals) as bigint;
    if (minor > maxMinor) throw new MoneyError('above_maximum', moneyErrorMessage('above_maximum', rule));
    if (typeof input === 'number' && significantDigits(parts) > MAX_NUMBER_SIGNIFICANT_DIGITS) {
      throw new MoneyError('not_representable', moneyErrorMessage('not_representable', rule));
    }
    return new Money(minor, rule.code, rule.decimals);
  }

  /** An amount already in minor units (any sign; no maximum). */
  static fromMinor(minor: bigint, rule: CurrencyRule): Money {
    checkRule(rule);
    if (typeof minor !== 'bigint') throw new MoneyError('not_a_number', 'minor units must be a bigint');
    return new Money(minor, rule.code, rule.decimals);
  }

  static zero(rule: CurrencyRule): Money {
    return Money.fromMinor(0n, rule);
  }

  /** Canonical decimal with exactly `decimals` digits after the point: '1500', '12.50'. */
  toString(): string {
    return formatMinor(this.minor, this.decimals);
  }

  /** Serialised as its canonical decimal string, never as a JSON number. */
  toJSON(): string {
    return this.toString();
  }

  /**
   * The JSON number for the provider. Proved exact: the number must print as the canonical
   * decimal without trailing zeros ('12.50' → 12.5, '1500' → 1500), otherwise it is refused.
   */
  toProviderNumber(): number {
    const text = this.toString();
    const decimal = text.includes('.') ? trimEnd(trimEnd(text, '0'), '.') : text;
    const value = Number(decimal);
    if (!Number.isFinite(value) || String(value) !== decimal) {
      throw new MoneyError('not_representable', `${decimal} ${this.currency} cannot be sent exactly as a JSON number`);
    }
    return value;
  }

  plus(other: Money): Money {
    this.assertSameCurrency(other);
    return new Money(this.minor + other.minor, this.currency, this.decimals);
  }

  minus(other: Money): Money {
    this.assertSameCurrency(other);
    return new Money(this.minor - other.minor, this.currency, this.decimals);
  }

  /** -1, 0 or 1; amounts of different currencies are not comparable (MoneyError). */
  compare(other: Money): -1 | 0 | 1 {
    this.assertSameCurrency(other);
    return this.minor < other.minor ? -1 : this.minor > other.minor ? 1 : 0;
  }

  isZero(): boolean {
    return this.minor === 0n;
  }

  /** Same currency and same amount ('12.5' and '12.50' EUR are equal). */
  equals(other: Money): boolean {
    return other instanceof Money && this.currency === other.currency && this.decimals === other.decimals && this.minor === other.minor;
  }

  private assertSameCurrency(other: Money): void {
    if (this.currency !== other.currency || this.decimals !== other.decimals) {
      throw new MoneyError('currency_mismatch', `cannot combine ${this.currency} with ${other.currency}`);
    }
  }
}

/**
 * A percentage rate in ten-thousandths of a percent (33.33 → 333300n): a positive decimal string
 * or number with at most `RATE_DECIMALS` decimals, at most 100. Refused: MoneyError('invalid_rate').
 */
export function parseRate(rate: unknown): bigint {
  const checked = checkAmountInput(rate);
  const invalid = () => new MoneyError('invalid_rate', 'a rate must be a positive percentage of at most 100 with at most 4 decimals');
  if (!checked.ok || checked.parts.frac.length > RATE_DECIMALS || checked.parts.int.length > 3) throw invalid();
  const value = toMinor(checked.parts, RATE_DECIMALS) as bigint;
  if (value > 100n * 10n ** BigInt(RATE_DECIMALS)) throw invalid();
  return value;
}

/**
 * Splits `amountMinor` by percentage `rates` with the largest-remainder method, in minor units.
 *
 * The shares sum to exactly floor(amount × sum(rates) / 100): never more than the amount, and
 * the whole amount when the rates sum to 100. Each share first gets the floor of its exact
 * portion; the units left over go one each to the largest remainders, ties to the lower index,
 * so the result is deterministic. Rates sum above 100: MoneyError('rates_above_100').
 *
 * 10000 at [33.33, 33.33, 33.34] → [3333, 3333, 3334]; 100 at [33, 33, 33] → [33, 33, 33]
 * (1% is nobody's); 1 at [50, 50] → [1, 0].
 */
export function allocateMinor(amountMinor: bigint, rates: readonly (string | number)[]): bigint[] {
  if (typeof amountMinor !== 'bigint' || amountMinor < 0n)
    throw new MoneyError('not_positive', 'only a non-negative amount can be allocated');
  const scaled = rates.map(parseRate);
  const whole = 100n * 10n ** BigInt(RATE_DECIMALS);
  const rateSum = scaled.reduce((sum, r) => sum + r, 0n);
  if (rateSum > whole) throw new MoneyError('rates_above_100', 'rates must sum to at most 100');
  const target = (amountMinor * rateSum) / whole;
  const shares = scaled.map((r) => (amountMinor * r) / whole);
  const remainders = scaled.map((r, index) => ({ index, remainder: (amountMinor * r) % whole }));
  let left = target - shares.reduce((sum, s) => sum + s, 0n);
  remainders.sort((a, b) => (a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1));
  // Fewer leftover units than shares: each floor loses less than one unit and the sum of losses is
  // below the number of shares, so one pass suffices.
  for (const { index } of remainders) {
    if (left <= 0n) break;
    shares[index] += 1n;
    left -= 1n;
  }
  return shares;
}

/**
 * Reads a stored decimal (a Prisma `Decimal`, whose toString() may use an exponent such as
 * '1e-7' or '1e+21', or a plain string) without going through a float. Any sign and zero are
 * accepted and the maximum is not applied (stored data was validated when written, and a later
 * lower maximum must not make it unreadable), but a non-zero digit beyond the currency's
 * decimals is refused: that is corrupt data, and it is never rounded.
 */
export function parseStoredDecimal(value: string | { toString(): string }, rule: CurrencyRule): Money {
  checkRule(rule);
  const text = value === null || value === undefined ? '' : String(value.toString()).trim();
  const parts = parseExponentDecimal(text);
  if (parts === null) throw new MoneyError('not_a_number', `stored amount "${text.slice(0, 40)}" is not a decimal`);
  const minor = toMinor(parts, rule.decimals);
  if (typeof minor !== 'bigint')
    throw new MoneyError(minor, `stored amount ${text} has more than ${rule.decimals} decimals for ${rule.code}`);
  return Money.fromMinor(minor, rule);
}

/**
 * A stored amount that cannot be shown exactly in its currency (more decimals than it has, not a
 * decimal): corrupt data, never rounded nor shown as is. A 500 with a stable code; the problem
 * filter logs it, with the value and the currency.
 */
export class CorruptStoredAmountError extends DomainError {
  readonly status = 500;
  readonly code = 'stored_amount_corrupt';
  readonly title = 'A stored amount cannot be read';

  constructor(
    readonly storedValue: string,
    readonly currency: string,
    cause: MoneyError,
  ) {
    super(`A stored ${currency} amount cannot be read exactly, so it is not shown. Quote the requestId when reporting it.`, { cause });
  }
}

/** A stored amount as Money, exact; corrupt data is a CorruptStoredAmountError. */
export function readStoredAmount(value: string | { toString(): string }, rule: CurrencyRule): Money {
  try {
    return parseStoredDecimal(value, rule);
  } catch (error) {
    throw error instanceof MoneyError ? new CorruptStoredAmountError(String(value), rule.code, error) : error;
  }
}

type Currencies = Record<string, CurrencyRule>;

/**
 * A stored amount as the API shows it: its currency's canonical decimal ('1500', '12.50'). As
 * stored when the currency is no longer configured (no rule is left to check it); null stays null.
 */
export function formatStoredAmount(value: string, currency: string | null, currencies: Currencies): string;
export function formatStoredAmount(value: string | null, currency: string | null, currencies: Currencies): string | null;
export function formatStoredAmount(value: string | null, currency: string | null, currencies: Currencies): string | null {
  // Own keys only: 'constructor' or '__proto__' is no configured currency.
  const rule = currency !== null && Object.prototype.hasOwnProperty.call(currencies, currency) ? currencies[currency] : undefined;
  return value === null || !rule ? value : readStoredAmount(value, rule).toString();
}
