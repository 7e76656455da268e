import {
  CorruptStoredAmountError,
  formatStoredAmount,
  Money,
  MoneyError,
  type CurrencyRule,
  type MoneyErrorReason,
  parseStoredDecimal,
  readStoredAmount,
} from './money';

const XAF: CurrencyRule = { code: 'XAF', decimals: 0, maxAmount: '100000000' };
const XOF: CurrencyRule = { code: 'XOF', decimals: 0, maxAmount: '100000000' };
const EUR: CurrencyRule = { code: 'EUR', decimals: 2, maxAmount: '100000000' };
const USD: CurrencyRule = { code: 'USD', decimals: 2, maxAmount: '50000' };

function reasonOf(fn: () => unknown): MoneyErrorReason | 'no error' {
  try {
    fn();
  } catch (error) {
    if (error instanceof MoneyError) return error.reason;
    throw error;
  }
  return 'no error';
}

const parsed = (input: unknown, rule: CurrencyRule) => Money.parse(input, rule).toString();

describe('Money.parse: zero-decimal currencies (XAF, XOF)', () => {
  it.each([XAF, XOF])('$code accepts whole amounts as strings and numbers', (rule) => {
    expect(parsed('1500', rule)).toBe('1500');
    expect(parsed(1500, rule)).toBe('1500');
    expect(parsed('  1500\n', rule)).toBe('1500');
    expect(parsed('1', rule)).toBe('1');
    expect(Money.parse('1500', rule).minor).toBe(1500n);
    expect(Money.parse('1500', rule).currency).toBe(rule.code);
    expect(Money.parse('1500', rule).decimals).toBe(0);
  });

  it.each([XAF, XOF])('$code accepts trailing zeros after the point and normalises them away', (rule) => {
    expect(parsed('1500.0', rule)).toBe('1500');
    expect(parsed('1500.000', rule)).toBe('1500');
    expect(parsed(1500.0, rule)).toBe('1500');
  });

  it.each([XAF, XOF])('$code refuses any non-zero decimal, as a string or a number', (rule) => {
    expect(reasonOf(() => Money.parse('1500.5', rule))).toBe('too_many_decimals');
    expect(reasonOf(() => Money.parse(1500.5, rule))).toBe('too_many_decimals');
    expect(reasonOf(() => Money.parse('1500.0001', rule))).toBe('too_many_decimals');
    expect(reasonOf(() => Money.parse('0.5', rule))).toBe('too_many_decimals');
  });

  it('drops leading zeros', () => {
    expect(parsed('0001500', XAF)).toBe('1500');
  });
});

describe('Money.parse: two-decimal currencies (EUR, USD)', () => {
  it.each([EUR, USD])('$code pads to exactly two decimals', (rule) => {
    expect(parsed('12.5', rule)).toBe('12.50');
    expect(parsed(12.5, rule)).toBe('12.50');
    expect(parsed('12.50', rule)).toBe('12.50');
    expect(parsed('12', rule)).toBe('12.00');
    expect(parsed(12, rule)).toBe('12.00');
    expect(parsed('0.01', rule)).toBe('0.01');
    expect(parsed(0.01, rule)).toBe('0.01');
    expect(parsed('12.500000', rule)).toBe('12.50');
    expect(Money.parse('12.5', rule).minor).toBe(1250n);
  });

  it.each([EUR, USD])('$code refuses a third non-zero decimal, never rounding', (rule) => {
    expect(reasonOf(() => Money.parse('12.345', rule))).toBe('too_many_decimals');
    expect(reasonOf(() => Money.parse(12.345, rule))).toBe('too_many_decimals');
    expect(reasonOf(() => Money.parse('0.001', rule))).toBe('too_many_decimals');
    expect(reasonOf(() => Money.parse('12.3450', rule))).toBe('too_many_decimals');
  });

  it('refuses float artefacts such as 0.1 + 0.2', () => {
    expect(reasonOf(() => Money.parse(0.30000000000000004, EUR))).toBe('too_many_decimals');
    expect(reasonOf(() => Money.parse(0.1 + 0.2, EUR))).toBe('too_many_decimals');
    expect(reasonOf(() => Money.parse(1.005 * 100, XAF))).toBe('too_many_decimals');
    // ...while what the client most plausibly wrote is read exactly.
    expect(parsed(0.3, EUR)).toBe('0.30');
    expect(parsed(1.1, EUR)).toBe('1.10');
    expect(parsed(19.99, EUR)).toBe('19.99');
  });
});

describe('Money.parse: refusals and their reasons', () => {
  it.each<[string, unknown, MoneyErrorReason]>([
    ['zero string', '0', 'not_positive'],
    ['zero with decimals', '0.00', 'not_positive'],
    ['zero number', 0, 'not_positive'],
    ['negative zero', -0, 'not_positive'],
    ['negative number', -1, 'not_positive'],
    ['negative decimal number', -12.5, 'not_positive'],
    ['negative string', '-1', 'not_positive'],
    ['negative decimal string', '-12.50', 'not_positive'],
    ['letters', 'abc', 'not_a_number'],
    ['empty string', '', 'not_a_number'],
    ['blank string', ' ', 'not_a_number'],
    ['NaN', NaN, 'not_a_number'],
    ['"NaN"', 'NaN', 'not_a_number'],
    ['Infinity', Infinity, 'not_finite'],
    ['-Infinity', -Infinity, 'not_finite'],
    ['"Infinity"', 'Infinity', 'not_finite'],
    ['exponent string', '1e3', 'not_a_number'],
    ['upper-case exponent string', '1E3', 'not_a_number'],
    ['hex string', '0x10', 'not_a_number'],
    ['octal-like literal string', '0o17', 'not_a_number'],
    ['binary literal string', '0b11', 'not_a_number'],
    ['leading plus', '+1', 'not_a_number'],
    ['space inside', '1 500', 'not_a_number'],
    ['thousands separator', '1,500', 'not_a_number'],
    ['decimal comma', '12,50', 'not_a_number'],
    ['leading point', '.5', 'not_a_number'],
    ['trailing point', '5.', 'not_a_number'],
    ['two points', '1.2.3', 'not_a_number'],
    ['sign after spaces inside', '- 1', 'not_a_number'],
    ['currency inside', '12 EUR', 'not_a_number'],
    ['unicode digits', '١٢', 'not_a_number'],
    ['full-width digits', '１２', 'not_a_number'],
    ['null', null, 'not_a_number'],
    ['undefined', undefined, 'not_a_number'],
    ['true', true, 'not_a_number'],
    ['false', false, 'not_a_number'],
    ['object', {}, 'not_a_number'],
    ['array', ['12'], 'not_a_number'],
    ['bigint', 12n, 'not_a_number'],
    ['boxed number', Object(12), 'not_a_number'],
    ['boxed string', Object('12'), 'not_a_number'],
    ['object with toString', { toString: () => '12' }, 'not_a_number'],
  ])('%s', (_label, input, reason) => {
    expect(reasonOf(() => Money.parse(input, EUR))).toBe(reason);
  });

  it('refuses number exponent forms by value: 1e21 above the maximum, 1e-7 too precise', () => {
    expect(String(1e21)).toBe('1e+21');
    expect(reasonOf(() => Money.parse(1e21, XAF))).toBe('above_maximum');
    expect(reasonOf(() => Money.parse(1.5e300, EUR))).toBe('above_maximum');
    expect(reasonOf(() => Money.parse(Number.MAX_VALUE, EUR))).toBe('above_maximum');
    expect(reasonOf(() => Money.parse(1e-7, EUR))).toBe('too_many_decimals');
    expect(reasonOf(() => Money.parse(Number.MIN_VALUE, EUR))).toBe('too_many_decimals');
    // A JSON number written with an exponent but printed plainly is just that number.
    expect(parsed(JSON.parse('{"a":1e3}').a, XAF)).toBe('1000');
  });

  it('refuses a JSON number past 15 significant digits: the double no longer tells which decimal was sent', () => {
    const rule: CurrencyRule = { code: 'EUR', decimals: 2, maxAmount: '999999999999999' };
    // The client wrote 100000000000000.01; the double prints .02: never accept a changed amount.
    expect(String(JSON.parse('100000000000000.01'))).toBe('100000000000000.02');
    expect(reasonOf(() => Money.parse(JSON.parse('100000000000000.01'), rule))).toBe('not_representable');
    expect(parsed('100000000000000.01', rule)).toBe('100000000000000.01');
    expect(parsed(9999999999999.99, rule)).toBe('9999999999999.99');
  });

  it('carries a human message and is an Error', () => {
    const error = (() => {
      try {
        Money.parse('12.345', EUR);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(MoneyError);
    expect(error).toBeInstanceOf(Error);
    expect((error as MoneyError).message).toBe('EUR allows at most 2 decimals');
  });
});

describe('Money.parse: maximum', () => {
  it('accepts exactly the maximum and refuses one minor unit more', () => {
    expect(parsed('100000000', XAF)).toBe('100000000');
    expect(parsed(100000000, XAF)).toBe('100000000');
    expect(reasonOf(() => Money.parse('100000001', XAF))).toBe('above_maximum');
    expect(reasonOf(() => Money.parse(100000001, XAF))).toBe('above_maximum');
    expect(parsed('100000000.00', EUR)).toBe('100000000.00');
    expect(reasonOf(() => Money.parse('100000000.01', EUR))).toBe('above_maximum');
    expect(parsed('50000', USD)).toBe('50000.00');
    expect(reasonOf(() => Money.parse(50000.01, USD))).toBe('above_maximum');
  });

  it('refuses very large strings without precision loss', () => {
    const rule: CurrencyRule = { code: 'XAF', decimals: 0, maxAmount: '123456789012345678901234567890' };
    expect(parsed('123456789012345678901234567890', rule)).toBe('123456789012345678901234567890');
    expect(reasonOf(() => Money.parse('123456789012345678901234567891', rule))).toBe('above_maximum');
    expect(reasonOf(() => Money.parse('123456789012345678901234567890', XAF))).toBe('above_maximum');
    // 2^53 + 1 is not a double; as a string it stays exact.
    const big: CurrencyRule = { code: 'XAF', decimals: 0, maxAmount: '9007199254740993' };
    expect(Money.parse('9007199254740993', big).minor).toBe(9007199254740993n);
    expect(reasonOf(() => Money.parse('9007199254740994', big))).toBe('above_maximum');
  });

  it('refuses a megabyte of digits quickly, for its length', () => {
    const started = Date.now();
    expect(reasonOf(() => Money.parse('9'.repeat(1_000_000), XAF))).toBe('too_long');
    expect(reasonOf(() => Money.parse('0'.repeat(1_000_000) + '1', XAF))).toBe('too_long');
    expect(reasonOf(() => Money.parse('1.' + '0'.repeat(100_000) + '1', XAF))).toBe('too_long');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('Money: canonical output', () => {
  it('toString has exactly the currency decimals; JSON is the string', () => {
    expect(Money.parse('1500', XAF).toString()).toBe('1500');
    expect(Money.parse('12.5', EUR).toString()).toBe('12.50');
    expect(Money.parse('0.05', EUR).toString()).toBe('0.05');
    expect(JSON.stringify({ amount: Money.parse(12.5, EUR) })).toBe('{"amount":"12.50"}');
    expect(Money.fromMinor(-5n, EUR).toString()).toBe('-0.05');
    expect(Money.fromMinor(-1250n, EUR).toString()).toBe('-12.50');
    expect(Money.fromMinor(0n, EUR).toString()).toBe('0.00');
    expect(Money.fromMinor(7n, { code: 'TND', decimals: 3, maxAmount: '1' }).toString()).toBe('0.007');
  });

  it('toProviderNumber is exact', () => {
    expect(Money.parse('12.50', EUR).toProviderNumber()).toBe(12.5);
    expect(Money.parse('1500', XAF).toProviderNumber()).toBe(1500);
    expect(Money.parse('12.00', EUR).toProviderNumber()).toBe(12);
    expect(Money.parse('0.10', EUR).toProviderNumber()).toBe(0.1);
    expect(Money.parse('100000000', XAF).toProviderNumber()).toBe(100000000);
    expect(Money.parse('99999999.99', EUR).toProviderNumber()).toBe(99999999.99);
  });

  it('toProviderNumber refuses an amount a double cannot carry', () => {
    const huge: CurrencyRule = { code: 'XAF', decimals: 0, maxAmount: '1' + '0'.repeat(30) };
    expect(reasonOf(() => Money.parse('9007199254740993', huge).toProviderNumber())).toBe('not_representable');
    expect(reasonOf(() => Money.parse('1' + '0'.repeat(25), huge).toProviderNumber())).toBe('not_representable');
    expect(Money.parse('9007199254740992', huge).toProviderNumber()).toBe(9007199254740992);
  });

  it('is immutable', () => {
    const money = Money.parse('12.50', EUR);
    expect(Object.isFrozen(money)).toBe(true);
    expect(() => {
      (money as unknown as { minor: bigint }).minor = 1n;
    }).toThrow(TypeError);
    expect(money.minor).toBe(1250n);
  });
});

describe('Money: arithmetic and comparison', () => {
  const eur = (s: string) => Money.parse(s, EUR);

  it('adds and subtracts exactly', () => {
    expect(eur('0.10').plus(eur('0.20')).toString()).toBe('0.30');
    expect(eur('0.30').minus(eur('0.10')).toString()).toBe('0.20');
    expect(eur('10').minus(eur('12.50')).toString()).toBe('-2.50');
    expect(eur('12.50').minus(eur('12.5')).isZero()).toBe(true);
    // Sums may exceed the per-request maximum (a report total).
    expect(eur('100000000').plus(eur('100000000')).toString()).toBe('200000000.00');
  });

  it('compares and equals', () => {
    expect(eur('12.5').equals(eur('12.50'))).toBe(true);
    expect(eur('12.5').equals(eur('12.51'))).toBe(false);
    expect(eur('1').equals(Money.parse('1', USD))).toBe(false);
    expect(eur('1').compare(eur('2'))).toBe(-1);
    expect(eur('2').compare(eur('2.00'))).toBe(0);
    expect(eur('2.01').compare(eur('2'))).toBe(1);
    expect(eur('1').isZero()).toBe(false);
    expect(Money.zero(EUR).isZero()).toBe(true);
  });

  it('refuses to mix currencies', () => {
    expect(reasonOf(() => eur('1').plus(Money.parse('1', USD)))).toBe('currency_mismatch');
    expect(reasonOf(() => eur('1').minus(Money.parse('1', USD)))).toBe('currency_mismatch');
    expect(reasonOf(() => eur('1').compare(Money.parse('1', USD)))).toBe('currency_mismatch');
  });

  it('fromMinor takes bigint minor units only', () => {
    expect(Money.fromMinor(1250n, EUR).equals(eur('12.50'))).toBe(true);
    expect(reasonOf(() => Money.fromMinor(12.5 as unknown as bigint, EUR))).toBe('not_a_number');
  });
});

describe('parseStoredDecimal', () => {
  it('reads Prisma Decimal-like values exactly', () => {
    const decimal = (text: string) => ({ toString: () => text });
    expect(parseStoredDecimal(decimal('1500'), XAF).toString()).toBe('1500');
    expect(parseStoredDecimal(decimal('12.5'), EUR).toString()).toBe('12.50');
    expect(parseStoredDecimal('12.5000', EUR).toString()).toBe('12.50');
    expect(parseStoredDecimal(decimal('1e+21'), XAF).minor).toBe(10n ** 21n);
    expect(parseStoredDecimal(decimal('1.5e+3'), XAF).toString()).toBe('1500');
    expect(parseStoredDecimal(decimal('5e-2'), EUR).toString()).toBe('0.05');
    expect(parseStoredDecimal(decimal('123456789012345678901234.5'), EUR).toString()).toBe('123456789012345678901234.50');
    expect(parseStoredDecimal(decimal('-2.5'), EUR).toString()).toBe('-2.50');
    expect(parseStoredDecimal(decimal('0'), EUR).isZero()).toBe(true);
  });

  it('does not apply the request maximum', () => {
    expect(parseStoredDecimal('200000000', XAF).toString()).toBe('200000000');
  });

  it('refuses what it cannot read exactly', () => {
    expect(reasonOf(() => parseStoredDecimal('12.345', EUR))).toBe('too_many_decimals');
    expect(reasonOf(() => parseStoredDecimal('1e-7', EUR))).toBe('too_many_decimals');
    expect(reasonOf(() => parseStoredDecimal('NaN', EUR))).toBe('not_a_number');
    expect(reasonOf(() => parseStoredDecimal('Infinity', EUR))).toBe('not_a_number');
    expect(reasonOf(() => parseStoredDecimal('abc', EUR))).toBe('not_a_number');
    expect(reasonOf(() => parseStoredDecimal('', EUR))).toBe('not_a_number');
    expect(reasonOf(() => parseStoredDecimal('1e999999', EUR))).toBe('not_a_number');
  });
});

describe('formatStoredAmount (stored decimal → API string)', () => {
  const currencies = { XAF, EUR };

  it("writes the currency's canonical decimal, whatever the database spelled", () => {
    expect(formatStoredAmount('12.5', 'EUR', currencies)).toBe('12.50');
    expect(formatStoredAmount('1.5e+3', 'XAF', currencies)).toBe('1500');
    expect(formatStoredAmount('1500.000', 'XAF', currencies)).toBe('1500');
    expect(formatStoredAmount('-0.5', 'EUR', currencies)).toBe('-0.50');
  });

  it('shows an amount as stored when its currency is not (or no longer) configured, and null as null', () => {
    expect(formatStoredAmount('12.345', 'GBP', currencies)).toBe('12.345');
    expect(formatStoredAmount('7', null, currencies)).toBe('7');
    // Own keys only: an inherited property is no configured currency.
    expect(['constructor', '__proto__'].map((code) => formatStoredAmount('1.5', code, currencies))).toEqual(['1.5', '1.5']);
    expect(formatStoredAmount(null, 'EUR', currencies)).toBeNull();
  });

  it.each([
    ['more decimals than the currency has', '12.345', 'EUR', 'too_many_decimals'],
    ['a fraction of a zero-decimal currency', '1500.5', 'XAF', 'too_many_decimals'],
    ['no decimal at all', 'abc', 'XAF', 'not_a_number'],
  ])('refuses corrupt data (%s): a 500 with a stable code, never a rounded amount', (_what, value, currency, reason) => {
    let thrown: unknown;
    try {
      formatStoredAmount(value, currency, currencies);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CorruptStoredAmountError);
    expect(thrown).toMatchObject({ status: 500, code: 'stored_amount_corrupt', storedValue: value, currency });
    expect((thrown as CorruptStoredAmountError).detail).not.toContain(value);
    expect((thrown as Error).cause).toMatchObject({ reason });
    expect(() => readStoredAmount(value, currencies[currency as 'EUR'])).toThrow(CorruptStoredAmountError);
  });
});
