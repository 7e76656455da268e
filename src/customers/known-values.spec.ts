import fc from 'fast-check';
import { KnownValues } from './known-values';
import { ERASED_MARK } from './personal-data.register';

/** A personal value as people write them: letters (accented too), digits, spaces, @ . - + '. */
const personalValue = fc
  .array(fc.constantFrom(..."abcdeéïXYZ0123456789 @.-+'_".split('')), { minLength: 3, maxLength: 24 })
  .map((chars) => chars.join('').trim())
  .filter((value) => value.length >= 3 && /[\p{L}\p{N}]$/u.test(value) && /^[\p{L}\p{N}]/u.test(value));

/** JSON in which the values are hidden at random: whole strings, inside sentences, URL-encoded, as numbers. */
function jsonHolding(values: string[]) {
  const leaf = fc.oneof(
    fc.constantFrom(...values),
    fc.constantFrom(...values).map((v) => `Paid by ${v}, thanks`),
    fc.constantFrom(...values).map((v) => `email=${encodeURIComponent(v)}&x=1`),
    fc.constantFrom(...values).map((v) => v.toUpperCase()),
    fc.string(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
  );
  return fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      leaf,
      fc.array(tie('node'), { maxLength: 4 }),
      fc.dictionary(fc.string({ maxLength: 6 }), tie('node'), { maxKeys: 4 }),
    ),
  })).node;
}

/** Every string in a value position of a JSON value (keys are not values). */
const stringsOf = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(stringsOf)
      : value !== null && typeof value === 'object'
        ? Object.values(value).flatMap(stringsOf)
        : [];

/** The shape of a JSON value: its keys and arrays, every leaf a placeholder. */
const shapeOf = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(shapeOf)
    : value !== null && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shapeOf(item)]))
      : 'leaf';

const token = (value: string) => new RegExp(`(?<![\\p{L}\\p{N}])${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}])`, 'iu');

describe('KnownValues', () => {
  it('leaves no known value in any string of a JSON body, as written, upper-cased or URL-encoded, and keeps its keys and shape', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(personalValue, { minLength: 1, maxLength: 4 }).chain((values) => fc.tuple(fc.constant(values), jsonHolding(values))),
        ([values, body]) => {
          const scrubbed = new KnownValues(values).scrubJson(body);
          expect(shapeOf(scrubbed)).toEqual(shapeOf(body));
          for (const text of stringsOf(scrubbed)) {
            for (const value of values) {
              expect([value, text, token(value).test(text) || token(encodeURIComponent(value)).test(text)]).toEqual([value, text, false]);
            }
          }
        },
      ),
    );
  });

  it('replaces a value only as a whole token: a wallet number inside a longer reference stays', () => {
    const known = new KnownValues(['0700000001', 'Awa Ndiaye', 'awa@example.com']);
    expect(known.scrubText('ord_90700000001x')).toBe('ord_90700000001x');
    expect(known.scrubText('wallet 0700000001.')).toBe(`wallet ${ERASED_MARK}.`);
    expect(known.scrubText('Paid by AWA NDIAYE')).toBe(`Paid by ${ERASED_MARK}`);
    expect(known.scrubText('to=awa%40example.com')).toBe(`to=${ERASED_MARK}`);
    expect(known.scrubText('{"payer":"Awa Ndiaye"}')).toBe(`{"payer":"${ERASED_MARK}"}`);
    expect(known.scrubJson({ wallet: 700000001, amount: 1500, payer: 'Awa Ndiaye' })).toEqual({
      wallet: 700000001,
      amount: 1500,
      payer: ERASED_MARK,
    });
    expect(new KnownValues(['700000001']).scrubJson({ wallet: 700000001, amount: 1500 })).toEqual({ wallet: ERASED_MARK, amount: 1500 });
  });

  it('finds rows by the distinctive values only; a short or shared value is replaced where found, never searched', () => {
    const known = new KnownValues(['awa@example.com', 'Awa Ndiaye'], ['Awa', 'Douala', 'CM']);
    expect(known.needles).toEqual(['awa@example.com', 'awa%40example.com', 'awa ndiaye', 'awa%20ndiaye']);
    expect(known.scrubJson({ city: 'Douala', country: 'CM', first: 'Awa', note: 'CM wallet' })).toEqual({
      city: ERASED_MARK,
      country: ERASED_MARK,
      first: ERASED_MARK,
      note: 'CM wallet',
    });
    expect(new KnownValues([ERASED_MARK, ' ', '']).isEmpty).toBe(true);
  });
});
