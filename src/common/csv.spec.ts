import { csvCell, csvRow } from './csv';

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

  it('ends rows with CRLF', () => {
    expect(csvRow(['a', '=1', 'b,c'])).toBe(`a,'=1,"b,c"\r\n`);
  });
});
