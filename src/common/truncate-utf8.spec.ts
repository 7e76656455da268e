import fc from 'fast-check';
import { truncateUtf8 } from './truncate-utf8';

describe('truncateUtf8', () => {
  it('keeps short texts whole', () => {
    expect(truncateUtf8('', 4)).toBe('');
    expect(truncateUtf8('abcd', 4)).toBe('abcd');
    expect(truncateUtf8('€', 3)).toBe('€');
  });

  it('never cuts a character in two', () => {
    expect(truncateUtf8('abcde', 4)).toBe('abcd');
    expect(truncateUtf8('a€', 3)).toBe('a');
    expect(truncateUtf8('€€', 5)).toBe('€');
    expect(truncateUtf8('a😀b', 4)).toBe('a');
    expect(truncateUtf8('a😀b', 5)).toBe('a😀');
  });

  it('is the longest well-formed prefix within the bound, for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.integer({ min: 0, max: 120 }), (text, maxBytes) => {
        const kept = truncateUtf8(text, maxBytes);
        expect(text.startsWith(kept)).toBe(true);
        expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(maxBytes);
        const next = [...text.slice(kept.length)][0];
        if (next !== undefined) expect(Buffer.byteLength(kept + next)).toBeGreaterThan(maxBytes);
      }),
      { numRuns: 1_000 },
    );
  });

  it('takes milliseconds on a large text of multi-byte characters', () => {
    const text = '€'.repeat(1_000_000);
    const started = performance.now();
    expect(Buffer.byteLength(truncateUtf8(text, 64 * 1024))).toBe(65_535);
    expect(performance.now() - started).toBeLessThan(100);
  });
});
