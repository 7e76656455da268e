import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';
import type { FieldError } from './domain-error';
import { checkAmountInput } from './decimal-text';
import { Money, MoneyError, moneyErrorMessage, parseRate, RATE_DECIMALS, type CurrencyRule } from './money';

/**
 * DTO decorators for money. They check what can be checked without knowing the currency; the
 * currency-dependent rules (decimals, maximum, accepted codes) need the configuration and are
 * applied by `validateAmountForCurrency` in the service, which answers the same problem+json
 * field errors as the global ValidationPipe (raise `new ValidationFailedError(result.errors)`).
 */

/**
 * A positive, finite amount as a string or a JSON number with plain decimal syntax
 * (`^\d+(\.\d+)?$` after trim for strings: no sign, exponent, hex or inner space). The value is
 * left as it came (no transformation): `Money.parse` reads it exactly later.
 */
export function IsMoneyAmount(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isMoneyAmount',
      target: target.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate: (value: unknown) => checkAmountInput(value).ok,
        defaultMessage: (args?: ValidationArguments) => {
          const field = args?.property ?? 'amount';
          const checked = checkAmountInput(args?.value);
          return checked.ok ? `${field} is invalid` : moneyErrorMessage(checked.reason, undefined, field);
        },
      },
    });
  };
}

/** An ISO 4217 code: three upper-case letters. Whether it is accepted is the service's check. */
export function IsCurrencyCode(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isCurrencyCode',
      target: target.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && /^[A-Z]{3}$/.test(value),
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property ?? 'currency'} must be an ISO 4217 code of three upper-case letters`,
      },
    });
  };
}

/**
 * A percentage rate for `Money.allocate` / `allocateMinor`: positive, at most 100, at most four
 * decimals, as a string or a number. The sum of rates is the service's check (MoneyError
 * 'rates_above_100' from the allocation).
 */
export function IsPercentageRate(maxDecimals: number = RATE_DECIMALS, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isPercentageRate',
      target: target.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate: (value: unknown) => {
          try {
            parseRate(value);
          } catch {
            return false;
          }
          // parseRate read it, so it is short and checkAmountInput has its significant decimals.
          const checked = checkAmountInput(value);
          return checked.ok && checked.parts.frac.length <= maxDecimals;
        },
        defaultMessage: (args?: ValidationArguments) => {
          const field = args?.property ?? 'rate';
          const checked = checkAmountInput(args?.value);
          if (!checked.ok && checked.reason === 'too_long') return moneyErrorMessage('too_long', undefined, field);
          return `${field} must be a positive percentage of at most 100 with at most ${maxDecimals} decimals, as a string or a number`;
        },
      },
    });
  };
}

export interface AmountFieldNames {
  amount?: string;
  currency?: string;
}

/**
 * The currency-dependent check of a request's `amount` and `currency`: either the exact `Money`,
 * or every field error at once (an unknown currency and a malformed amount are both reported).
 * Messages: 'currency must be one of XAF, XOF, EUR, USD', 'EUR allows at most 2 decimals',
 * 'XAF allows no decimals', 'amount must not exceed 100000000 XAF', 'amount must be greater than
 * zero', 'amount must be a positive decimal number, as a string or a number', ...
 */
export function validateAmountForCurrency(
  amount: unknown,
  currencyCode: string,
  currencies: Record<string, CurrencyRule>,
  fields: AmountFieldNames = {},
): { money: Money } | { errors: FieldError[] } {
  const amountField = fields.amount ?? 'amount';
  const currencyField = fields.currency ?? 'currency';
  const accepted = typeof currencyCode === 'string' && Object.prototype.hasOwnProperty.call(currencies, currencyCode);
  if (!accepted) {
    const errors: FieldError[] = [
      { field: currencyField, message: `${currencyField} must be one of ${Object.keys(currencies).join(', ')}` },
    ];
    const checked = checkAmountInput(amount);
    if (!checked.ok) errors.push({ field: amountField, message: moneyErrorMessage(checked.reason, undefined, amountField) });
    return { errors };
  }
  const rule = currencies[currencyCode];
  try {
    return { money: Money.parse(amount, rule) };
  } catch (error) {
    if (!(error instanceof MoneyError)) throw error;
    return { errors: [{ field: amountField, message: moneyErrorMessage(error.reason, rule, amountField) }] };
  }
}
