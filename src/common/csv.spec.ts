import fc from 'fast-check';
import { csvCell, csvDecimalCell, csvRow } from './csv';
import { parseCsv } from '../../test/support/csv-reader';

const FORMULA_STARTS = ['=', '+', '-', '@', '\t', '\r'];
/** Strings that often start like a formula, and any text at all. */
const cellText = fc.oneof(
  fc.string(),
  fc.tuple(fc.constantFrom(...FORMULA_STARTS, "'", '"', ';', ','), fc.string()).map(([start, rest]) => start + rest),
  fc.string({ unit: fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', '"', ',', ';', "'", 'a', 'é', '1') }),
);

describe('csv', () => {
  it('quotes per RFC 4180 only when needed', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(12)).toBe('12');
  });

  it.each(['=SUM(A1:A9)', '+33 6 12', '-2+3', '@cmd', '\tx', '\rx'])('neutralises the formula %j', (value) => {
    expect(csvCell(value).replace(/^"|"$/g, '').startsWith("'")).toBe(true);
  });

  it('quotes a cell holding a semicolon, so that a semicolon-separated locale cannot split out a formula', () => {
    expect(csvCell('Awa;=HYPERLINK("http://evil.test","x");x')).toBe('"Awa;=HYPERLINK(""http://evil.test"",""x"");x"');
    expect(csvCell('a;b')).toBe('"a;b"');
    expect(csvCell('=1;2')).toBe(`"'=1;2"`);
    expect(csvRow(['Awa;=1+1', 'b'])).toBe('"Awa;=1+1",b\r\n');
  });

  it('ends rows with CRLF', () => {
    expect(csvRow(['a', '=1', 'b,c'])).toBe(`a,'=1,"b,c"\r\n`);
  });

  it('writes numbers as numbers: a negative amount is no formula', () => {
    expect(csvCell(-1500)).toBe('-1500');
    expect(csvDecimalCell('-19.99')).toBe('-19.99');
    expect(csvDecimalCell('1500')).toBe('1500');
    // Not a plain decimal: text, and neutralised like any text.
    expect(csvDecimalCell('-1+1')).toBe("'-1+1");
    expect(csvDecimalCell('=1')).toBe("'=1");
    expect(csvDecimalCell(null)).toBe('');
  });

  it('property: a text cell read back never starts like a formula unless behind the apostrophe, and reads back as written', () => {
    fc.assert(
      fc.property(cellText, (text) => {
        const [[read]] = parseCsv(csvRow([text]));
        const dangerous = FORMULA_STARTS.some((start) => text.startsWith(start));
        expect(read).toBe(dangerous ? `'${text}` : text);
        expect(FORMULA_STARTS.some((start) => read.startsWith(start))).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: a row of cells reads back cell by cell, whatever they hold', () => {
    fc.assert(
      fc.property(fc.array(cellText, { minLength: 1, maxLength: 8 }), (cells) => {
        const rows = parseCsv(csvRow(cells));
        expect(rows).toHaveLength(1);
        expect(rows[0]).toEqual(cells.map((text) => (FORMULA_STARTS.some((start) => text.startsWith(start)) ? `'${text}` : text)));
      }),
      { numRuns: 1000 },
    );
  });
});
