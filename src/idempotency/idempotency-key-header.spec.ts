import { ValidationFailedError } from '../common/domain-error';
import { parseIdempotencyKey } from './idempotency-key-header';
import { IdempotencyKeyRequiredError } from './idempotency.errors';

describe('parseIdempotencyKey', () => {
  it('accepts 1 to 255 printable ASCII characters', () => {
    expect(parseIdempotencyKey('a')).toBe('a');
    expect(parseIdempotencyKey('order 42 / retry ~1')).toBe('order 42 / retry ~1');
    expect(parseIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
  });

  it('requires the header', () => {
    expect(() => parseIdempotencyKey(undefined)).toThrow(IdempotencyKeyRequiredError);
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['non-ASCII', 'clé'],
    ['with a control character', 'a\tb'],
    ['repeated', ['a', 'b']],
  ])('refuses a %s key as a validation failure of the header', (_label, header) => {
    try {
      parseIdempotencyKey(header);
      throw new Error('accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationFailedError);
      expect((error as ValidationFailedError).errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    }
  });
});
