import fc from 'fast-check';
import { BODY_BOUNDS, bodyRefusal, BodyTooComplexError, checkedJsonText, formExcess, isExactNumberText, jsonExcess } from './bounded-json';

const nested = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth);
const objectWithKeys = (count: number, key = (i: number) => `k${i}`) =>
  `{${Array.from({ length: count }, (_, i) => `"${key(i)}":${i}`).join(',')}}`;

describe('jsonExcess', () => {
  it('accepts ordinary bodies', () => {
    expect(jsonExcess('{"amount":"12.50","currency":"XAF","payer":{"name":"A, B [x] {y}"}}')).toBeUndefined();
    expect(jsonExcess('')).toBeUndefined();
    expect(jsonExcess('"a string"')).toBeUndefined();
    expect(jsonExcess('[]')).toBeUndefined();
    expect(jsonExcess('{ }')).toBeUndefined();
  });

  it('allows 32 levels of nesting and refuses 33, arrays and objects alike', () => {
    expect(jsonExcess(nested(32))).toBeUndefined();
    expect(jsonExcess(nested(33))).toMatch(/deeper than 32/);
    expect(jsonExcess('{"a":'.repeat(32) + '1' + '}'.repeat(32))).toBeUndefined();
    expect(jsonExcess('{"a":'.repeat(33) + '1' + '}'.repeat(33))).toMatch(/deeper than 32/);
    // Deep enough to overflow a recursive parser: refused without recursing.
    expect(jsonExcess(nested(100_000))).toMatch(/deeper/);
  });

  it('allows 1,000 keys in an object and refuses 1,001, duplicates counted', () => {
    expect(jsonExcess(objectWithKeys(1_000))).toBeUndefined();
    expect(jsonExcess(objectWithKeys(1_001))).toMatch(/more than 1000 keys/);
    expect(jsonExcess(objectWithKeys(1_001, () => 'same'))).toMatch(/more than 1000 keys/);
    // An array is not an object: its elements count towards the document's values only.
    expect(jsonExcess(`[${Array.from({ length: 5_000 }, () => 1).join(',')}]`)).toBeUndefined();
  });

  it('refuses a document of more than 10,000 values however they are spread', () => {
    const manyObjects = `[${Array.from({ length: 20 }, () => objectWithKeys(600)).join(',')}]`;
    expect(jsonExcess(manyObjects)).toMatch(/more than 10000 values/);
    expect(jsonExcess(`[${Array.from({ length: 10_001 }, () => 0).join(',')}]`)).toMatch(/values/);
  });

  it('is not fooled by brackets, commas and escaped quotes inside strings', () => {
    expect(jsonExcess(JSON.stringify({ text: '['.repeat(500) + ','.repeat(5_000) + '\\"{{{' }))).toBeUndefined();
    expect(jsonExcess(JSON.stringify({ [`key "with" , [ quotes \\`]: '\\\\', other: '"],}' }))).toBeUndefined();
  });

  it('agrees with JSON.parse on the depth and width of generated documents', () => {
    const measure = (value: unknown, depth = 1): { depth: number; maxKeys: number } => {
      if (value === null || typeof value !== 'object') return { depth: depth - 1, maxKeys: 0 };
      const children = Object.values(value).map((v) => measure(v, depth + 1));
      const own = Array.isArray(value) ? 0 : Object.keys(value).length;
      return { depth: Math.max(depth, ...children.map((c) => c.depth)), maxKeys: Math.max(own, ...children.map((c) => c.maxKeys)) };
    };
    fc.assert(
      fc.property(fc.json({ depthSize: 'large' }), (text) => {
        const bounds = { maxDepth: 4, maxKeysPerObject: 3, maxValues: 1_000_000 };
        const { depth, maxKeys } = measure(JSON.parse(text));
        expect(jsonExcess(text, bounds) === undefined).toBe(depth <= 4 && maxKeys <= 3);
      }),
      { numRuns: 500 },
    );
  });

  it('scans a 1 MiB hostile body in a few milliseconds', () => {
    const wide = objectWithKeys(60_000);
    const started = performance.now();
    for (let i = 0; i < 10; i++) jsonExcess(wide);
    jsonExcess(nested(500_000));
    expect((performance.now() - started) / 11).toBeLessThan(50);
  });
});

describe('formExcess', () => {
  it('counts fields', () => {
    expect(formExcess('')).toBeUndefined();
    expect(formExcess(Array.from({ length: 1_000 }, (_, i) => `f${i}=1`).join('&'))).toBeUndefined();
    expect(formExcess(Array.from({ length: 1_001 }, (_, i) => `f${i}=1`).join('&'))).toMatch(/more than 1000 fields/);
  });
});

describe('bodyRefusal', () => {
  it('is the stable 400 body_too_complex, only when there is an excess', () => {
    expect(bodyRefusal(undefined)).toBeUndefined();
    const refusal = bodyRefusal(jsonExcess(nested(BODY_BOUNDS.maxDepth + 1)));
    expect(refusal).toBeInstanceOf(BodyTooComplexError);
    expect(refusal).toMatchObject({ status: 400, code: 'body_too_complex', detail: 'JSON nests deeper than 32 levels.' });
  });
});

/** The exact value of a JSON number literal as numerator x 10^exponent, by BigInt (an oracle independent of the scanner). */
function exactValue(text: string): { numerator: bigint; exponent: number } {
  const [mantissa, exponent = '0'] = text.toLowerCase().split('e');
  const [int, frac = ''] = mantissa.split('.');
  return { numerator: BigInt(int + frac), exponent: Number(exponent) - frac.length };
}

function sameValue(a: string, b: string): boolean {
  const x = exactValue(a);
  const y = exactValue(b);
  const low = Math.min(x.exponent, y.exponent);
  return x.numerator * 10n ** BigInt(x.exponent - low) === y.numerator * 10n ** BigInt(y.exponent - low);
}

/** Any JSON number literal, exponents within a double's range and a little past it. */
const numberLiteral = fc
  .record({
    negative: fc.boolean(),
    int: fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9]\d{0,24}$/)),
    frac: fc.option(fc.stringMatching(/^\d{1,24}$/), { nil: undefined }),
    exponent: fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 340 })), {
      nil: undefined,
    }),
  })
  .map(
    ({ negative, int, frac, exponent }) =>
      `${negative ? '-' : ''}${int}${frac === undefined ? '' : `.${frac}`}${exponent === undefined ? '' : exponent[0] + exponent[1] + String(exponent[2])}`,
  );

describe('isExactNumberText', () => {
  it('tells a number whose text is the value JSON.parse makes of it', () => {
    for (const exact of [
      '1500',
      '1500.0',
      '1.5e3',
      '15E+2',
      '0',
      '-0',
      '0.0e5',
      '12.5',
      '0.1',
      '1e21',
      '1e-7',
      '5e-324',
      '9007199254740992',
    ])
      expect([exact, isExactNumberText(exact)]).toEqual([exact, true]);
    for (const inexact of [
      '1500.0000000000001',
      '50.000000000000001',
      '9007199254740993',
      '1e400',
      '-1e400',
      '1e-400',
      '0.30000000000000000001',
    ])
      expect([inexact, isExactNumberText(inexact)]).toEqual([inexact, false]);
  });

  it('agrees with an exact BigInt reading of the text and of the double it parses to', () => {
    fc.assert(
      fc.property(numberLiteral, (text) => {
        const value = Number(text);
        const expected = Number.isFinite(value) && sameValue(text, String(value).replace('e+', 'e'));
        expect(isExactNumberText(text)).toBe(expected);
      }),
      { numRuns: 2_000 },
    );
  });

  it('reads a megabyte literal in linear time', () => {
    const started = performance.now();
    expect(isExactNumberText('1.' + '0'.repeat(1_000_000) + '1')).toBe(false);
    expect(isExactNumberText('1' + '0'.repeat(1_000_000))).toBe(false);
    expect(isExactNumberText('1.' + '0'.repeat(1_000_000))).toBe(true);
    expect(isExactNumberText('1e' + '0'.repeat(1_000_000) + '1')).toBe(true);
    // A complexity class, not a speed: a quadratic pass over a megabyte takes minutes.
    expect((performance.now() - started) / 4).toBeLessThan(250);
  });
});

describe('checkedJsonText', () => {
  it('leaves a body without inexact numbers as it is: plain JSON.parse', () => {
    const text = '{"amount":1500,"rate":"50.000000000000001","list":[1.5,2e3,-0],"nested":{"a":12.50}}';
    expect(checkedJsonText(text)).toEqual({ text });
  });

  it('quotes each inexact number in value position, so that it arrives as its exact text', () => {
    const checked = checkedJsonText(
      '{"amount":1500.0000000000001,"currency":"XAF","rates":[50.000000000000001, 50],"n": 9007199254740993 }',
    );
    expect('text' in checked && JSON.parse(checked.text)).toEqual({
      amount: '1500.0000000000001',
      currency: 'XAF',
      rates: ['50.000000000000001', 50],
      n: '9007199254740993',
    });
    expect(checkedJsonText('1e400')).toEqual({ text: '"1e400"' });
  });

  it('never makes invalid JSON valid: a number key or a malformed literal stays as it was', () => {
    for (const invalid of [
      '{1500.0000000000001:1}',
      '[1 1500.0000000000001]',
      '{"a":1.5.0000000000000001}',
      '{"a":01500.0000000000001}',
      '{"a":1}1e400',
    ])
      expect(checkedJsonText(invalid)).toEqual({ text: invalid });
  });

  it('parses any document of numbers to the same values, inexact ones as their text', () => {
    fc.assert(
      fc.property(fc.array(numberLiteral, { maxLength: 8 }), fc.boolean(), (literals, spaced) => {
        const gap = spaced ? ' \n' : '';
        const text = `{${gap}"list":${gap}[${literals.join(`${gap},${gap}`)}]${gap},"object":{${literals.map((l, i) => `"k${i}":${gap}${l}`).join(',')}}}`;
        const checked = checkedJsonText(text);
        if (!('text' in checked)) throw new Error('refused');
        const expected = literals.map((l) => (isExactNumberText(l) ? Number(l) : l));
        const parsed = JSON.parse(checked.text);
        expect(parsed.list).toEqual(expected);
        expect(Object.values(parsed.object)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('still refuses what exceeds the bounds', () => {
    expect(checkedJsonText(nested(33))).toEqual({ refusal: expect.any(BodyTooComplexError) });
  });
});
