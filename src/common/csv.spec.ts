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

  it('quotes a cell holding a semicolon, so that a semicolon-separated locale cannot split out a formula', () => {
    expect(csvCell('Awa;=HYPERLINK("http://evil.test","x");x')).toBe('"Awa;=HYPERLINK(""http://evil.test"",""x"");x"');
    expect(csvCell('a;b')).toBe('"a;b"');
    expect(csvCell('=1;2')).toBe(`"'=1;2"`);
    expect(csvRow(['Awa;=1+1', 'b'])).toBe('"Awa;=1+1",b\r\n');
  });

  it('ends rows with CRLF', () => {
    expect(csvRow(['a', '=1', 'b,c'])).toBe(`a,'=1,"b,c"\r\n`);
  });
});
