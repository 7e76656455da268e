import 'reflect-metadata';
import { IsOptional, IsString, ValidateNested, validate } from 'class-validator';
import { plainToInstance, Type } from 'class-transformer';
import { ValidationFailedError } from './domain-error';
import { Money, type CurrencyRule } from './money';
import { IsCurrencyCode, IsMoneyAmount, IsPercentageRate, validateAmountForCurrency } from './money.validator';
import { createValidationPipe } from './validation';

class PaymentDto {
  @IsMoneyAmount()
  amount: string | number;

  @IsCurrencyCode()
  currency: string;

  @IsOptional()
  @IsString()
  description?: string;
}

class ShareDto {
  @IsString()
  matricule: string;

  @IsPercentageRate()
  rate: string | number;
}

class DistributionDto {
  @IsMoneyAmount()
  amount: string | number;

  @ValidateNested({ each: true })
  @Type(() => ShareDto)
  distribution: ShareDto[];
}

async function errorsOf(plain: object) {
  const errors = await validate(plainToInstance(PaymentDto, plain));
  return errors.map((e) => ({ property: e.property, messages: Object.values(e.constraints ?? {}) }));
}

const currencies: Record<string, CurrencyRule> = {
  XAF: { code: 'XAF', decimals: 0, maxAmount: '100000000' },
  XOF: { code: 'XOF', decimals: 0, maxAmount: '100000000' },
  EUR: { code: 'EUR', decimals: 2, maxAmount: '100000000' },
  USD: { code: 'USD', decimals: 2, maxAmount: '100000000' },
};

describe('@IsMoneyAmount / @IsCurrencyCode', () => {
  it.each<unknown>(['1500', 1500, '12.50', 12.5, ' 12.5 ', '0.01', '12.345', '123456789012345678901234567890', 1e21])(
    'accepts the currency-independent syntax of %p',
    async (amount) => {
      expect(await errorsOf({ amount, currency: 'EUR' })).toEqual([]);
    },
  );

  it.each<unknown>(['abc', '', ' ', '1e3', '0x10', '+1', '1 500', '12,50', '.5', null, undefined, true, {}, [], NaN])(
    'refuses %p with the syntax message',
    async (amount) => {
      expect(await errorsOf({ amount, currency: 'EUR' })).toEqual([
        { property: 'amount', messages: ['amount must be a positive decimal number, as a string or a number'] },
      ]);
    },
  );

  it.each<unknown>([0, '0', '0.00', -1, '-1', '-12.50'])('refuses %p as not positive', async (amount) => {
    expect(await errorsOf({ amount, currency: 'EUR' })).toEqual([{ property: 'amount', messages: ['amount must be greater than zero'] }]);
  });

  it.each<unknown>([Infinity, -Infinity, 'Infinity'])('refuses %p as not finite', async (amount) => {
    expect(await errorsOf({ amount, currency: 'EUR' })).toEqual([{ property: 'amount', messages: ['amount must be a finite number'] }]);
  });

  it.each<unknown>(['eur', 'EURO', 'EU', '978', '', 12, null, undefined])('refuses currency %p', async (currency) => {
    expect(await errorsOf({ amount: '1', currency })).toEqual([
      { property: 'currency', messages: ['currency must be an ISO 4217 code of three upper-case letters'] },
    ]);
  });

  it('names the decorated property in the message', async () => {
    class TopUpDto {
      @IsMoneyAmount()
      topUpAmount: unknown;
    }
    const errors = await validate(plainToInstance(TopUpDto, { topUpAmount: 'abc' }));
    expect(errors[0].constraints).toEqual({ isMoneyAmount: 'topUpAmount must be a positive decimal number, as a string or a number' });
  });

  it('validates rates in nested arrays', async () => {
    const ok = await validate(
      plainToInstance(DistributionDto, {
        amount: '100',
        distribution: [
          { matricule: 'a', rate: '33.33' },
          { matricule: 'b', rate: 66 },
        ],
      }),
    );
    expect(ok).toEqual([]);
    for (const rate of ['0', '-1', '100.0001', '33.33333', 'abc', null]) {
      const errors = await validate(plainToInstance(DistributionDto, { amount: '100', distribution: [{ matricule: 'a', rate }] }));
      expect(errors[0].children?.[0].children?.[0].constraints).toEqual({
        isPercentageRate: 'rate must be a positive percentage of at most 100 with at most 4 decimals, as a string or a number',
      });
    }
  });

  it('works under the global ValidationPipe (whitelisted, answered field by field)', async () => {
    const pipe = createValidationPipe();
    const metadata = { type: 'body' as const, metatype: PaymentDto };
    const dto = await pipe.transform({ amount: '12.50', currency: 'EUR' }, metadata);
    expect(dto).toBeInstanceOf(PaymentDto);
    // The value is kept as sent: the exact decimal is read later by Money.parse.
    expect(dto.amount).toBe('12.50');
    const failure = await pipe.transform({ amount: '1e3', currency: 'eur', extra: 1 }, metadata).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ValidationFailedError);
    expect((failure as ValidationFailedError).errors).toEqual(
      expect.arrayContaining([
        { field: 'amount', message: 'amount must be a positive decimal number, as a string or a number' },
        { field: 'currency', message: 'currency must be an ISO 4217 code of three upper-case letters' },
        { field: 'extra', message: 'property extra should not exist' },
      ]),
    );
  });
});

describe('validateAmountForCurrency', () => {
  const check = (amount: unknown, currency: string) => validateAmountForCurrency(amount, currency, currencies);

  it('gives the exact Money', () => {
    const result = check('12.5', 'EUR');
    expect('money' in result && result.money).toBeInstanceOf(Money);
    expect('money' in result && result.money.toString()).toBe('12.50');
    expect('money' in result && result.money.currency).toBe('EUR');
    const xaf = check(1500, 'XAF');
    expect('money' in xaf && xaf.money.minor).toBe(1500n);
  });

  it.each<[unknown, string, string]>([
    ['12.345', 'EUR', 'EUR allows at most 2 decimals'],
    [12.345, 'USD', 'USD allows at most 2 decimals'],
    [0.30000000000000004, 'EUR', 'EUR allows at most 2 decimals'],
    ['1500.5', 'XAF', 'XAF allows no decimals'],
    [1500.5, 'XOF', 'XOF allows no decimals'],
    ['100000001', 'XAF', 'amount must not exceed 100000000 XAF'],
    [1e21, 'XAF', 'amount must not exceed 100000000 XAF'],
    ['123456789012345678901234567890', 'EUR', 'amount must not exceed 100000000 EUR'],
    ['0', 'XAF', 'amount must be greater than zero'],
    [-5, 'EUR', 'amount must be greater than zero'],
    ['abc', 'EUR', 'amount must be a positive decimal number, as a string or a number'],
    [null, 'EUR', 'amount must be a positive decimal number, as a string or a number'],
    [NaN, 'EUR', 'amount must be a positive decimal number, as a string or a number'],
    [Infinity, 'EUR', 'amount must be a finite number'],
  ])('refuses %p %s: %s', (amount, currency, message) => {
    expect(check(amount, currency)).toEqual({ errors: [{ field: 'amount', message }] });
  });

  it('refuses an unknown currency and lists the accepted ones', () => {
    expect(check('12', 'GBP')).toEqual({ errors: [{ field: 'currency', message: 'currency must be one of XAF, XOF, EUR, USD' }] });
    expect(check('12', 'constructor')).toEqual({ errors: [{ field: 'currency', message: 'currency must be one of XAF, XOF, EUR, USD' }] });
    expect(check('12', undefined as unknown as string)).toEqual({
      errors: [{ field: 'currency', message: 'currency must be one of XAF, XOF, EUR, USD' }],
    });
  });

  it('reports an unknown currency and a malformed amount together', () => {
    expect(check('-1', 'GBP')).toEqual({
      errors: [
        { field: 'currency', message: 'currency must be one of XAF, XOF, EUR, USD' },
        { field: 'amount', message: 'amount must be greater than zero' },
      ],
    });
  });

  it('accepts exactly the maximum', () => {
    expect('money' in check('100000000', 'XAF')).toBe(true);
    expect('money' in check(100000000, 'EUR')).toBe(true);
  });

  it('uses other field names when asked', () => {
    expect(validateAmountForCurrency('1.5', 'XAF', currencies, { amount: 'topUp.amount' })).toEqual({
      errors: [{ field: 'topUp.amount', message: 'XAF allows no decimals' }],
    });
  });

  it('feeds ValidationFailedError, the same problem as the pipe', () => {
    const result = check('12.345', 'EUR');
    if (!('errors' in result)) throw new Error('expected errors');
    const error = new ValidationFailedError(result.errors);
    expect(error.status).toBe(400);
    expect(error.code).toBe('validation_failed');
    expect(error.errors).toEqual([{ field: 'amount', message: 'EUR allows at most 2 decimals' }]);
  });
});
