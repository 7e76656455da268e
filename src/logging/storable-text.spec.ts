import fc from 'fast-check';
import { UNPAIRED_SURROGATES } from '../common/unicode';
import { storableJson, storableText } from './storable-text';

describe('storable text', () => {
  it('replaces NUL and lone surrogates with U+FFFD, keeps pairs', () => {
    expect(storableText('a\u0000b')).toBe('a\uFFFDb');
    expect(storableText('x\ud800y\udc00z\ud83d\ude00')).toBe('x\uFFFDy\uFFFDz\ud83d\ude00');
    expect(storableJson({ 'k\u0000': ['v\u0000', 1, null] })).toEqual({ 'k\uFFFD': ['v\uFFFD', 1, null] });
  });

  it('answers a value that needs nothing as it is, and changes only copies, never the value it was given', () => {
    const clean = { a: ['x', { b: 'y', c: 2 }], d: null, e: true };
    expect(storableJson(clean)).toBe(clean);
    const dirty = { a: ['x', { b: 'y\u0000', c: 2 }], d: 'clean' };
    const before = structuredClone(dirty);
    const storable = storableJson(dirty);
    expect(storable).toEqual({ a: ['x', { b: 'y\uFFFD', c: 2 }], d: 'clean' });
    expect(dirty).toEqual(before);
  });

  it('any JSON value: the same as a deep copy made storable string by string', () => {
    const copied = (value: unknown): unknown => {
      if (typeof value === 'string') return value.replaceAll('\u0000', '\uFFFD').replace(UNPAIRED_SURROGATES, '\uFFFD');
      if (Array.isArray(value)) return value.map(copied);
      if (value && typeof value === 'object')
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [copied(k) as string, copied(v)]));
      return value;
    };
    const text = fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('\u0000', '\ud800', '\udc00x', '\ud83d\ude00'));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null), tie('list'), tie('object')),
      list: fc.array(tie('value'), { maxLength: 4 }),
      object: fc.dictionary(text, tie('value'), { maxKeys: 4 }),
    })).value;
    fc.assert(fc.property(json, (value) => expect(storableJson(value)).toEqual(copied(value))));
  });
});
