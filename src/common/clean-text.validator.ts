import { ValidateBy, type ValidationOptions } from 'class-validator';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Text PostgreSQL can store and every client can show: no NUL character (a text column refuses
 * it) and no unpaired surrogate (not valid Unicode; JSON encoders disagree on it).
 */
export function isCleanText(value: unknown): boolean {
  return typeof value === 'string' && !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

export function IsCleanText(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isCleanText',
      validator: {
        validate: isCleanText,
        defaultMessage: (args) => `${args?.property ?? 'value'} must not contain NUL characters or unpaired surrogates`,
      },
    },
    options,
  );
}
