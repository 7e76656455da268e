import fc from 'fast-check';
import { BODY_BOUNDS, bodyRefusal, BodyTooComplexError, formExcess, jsonExcess } from './bounded-json';

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
