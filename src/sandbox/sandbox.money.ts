/**
 * Exact money helpers for the sandbox. Amounts are held as bigint minor units; decimal strings are
 * parsed and formatted without ever going through floating point.
 */

/** ISO 4217 currencies without minor unit. Every other currency is treated as having 2 decimals. */
const ZERO_DECIMAL_CURRENCIES = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'ISK',
  'JPY',
  'KMF',
  'KRW',
  'PYG',
  'RWF',
  'UGX',
  'UYI',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);

export function currencyDecimals(currency: string): number {
  return ZERO_DECIMAL_CURRENCIES.has(currency.toUpperCase()) ? 0 : 2;
}

export function isCurrencyCode(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z]{3}$/.test(value);
}

export type ParsedAmount = { ok: true; minor: bigint } | { ok: false; reason: string };

/**
 * Parses a non-negative decimal string ("10", "10.5", "10.50") into minor units of a currency with
 * `decimals` decimals. More decimals than the currency allows are refused, never rounded.
 */
export function parseDecimalAmount(value: string, decimals: number, maxDecimals = 2): ParsedAmount {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(value);
  if (!match) return { ok: false, reason: 'must be a decimal string like "10" or "10.50"' };
  const [, whole, fraction = ''] = match;
  if (fraction.length > maxDecimals) return { ok: false, reason: `must have at most ${maxDecimals} decimals` };
  if (fraction.length > decimals) {
    return {
      ok: false,
      reason: decimals === 0 ? 'must not have decimals in this currency' : `must have at most ${decimals} decimals in this currency`,
    };
  }
  const minor = BigInt(whole) * 10n ** BigInt(decimals) + BigInt((fraction + '0'.repeat(decimals)).slice(0, decimals) || '0');
  return { ok: true, minor };
}

/** Formats minor units with exactly `decimals` decimals ("1050" with 2 decimals → "10.50"). */
export function formatMinor(minor: bigint, decimals: number): string {
  const negative = minor < 0n;
  const abs = negative ? -minor : minor;
  if (decimals === 0) return `${negative ? '-' : ''}${abs}`;
  const unit = 10n ** BigInt(decimals);
  const whole = abs / unit;
  const fraction = (abs % unit).toString().padStart(decimals, '0');
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}

/** Luhn check digit for a string of digits (the payload without its check digit). */
export function luhnCheckDigit(payload: string): number {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    // Walking from the right of the payload, every first, third, ... digit is doubled.
    let digit = Number(payload[payload.length - 1 - i]);
    if (i % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return (10 - (sum % 10)) % 10;
}

export function isLuhnValid(number: string): boolean {
  if (!/^\d{2,}$/.test(number)) return false;
  return luhnCheckDigit(number.slice(0, -1)) === Number(number[number.length - 1]);
}
