/**
 * RFC 4180 CSV cells, safe to open in a spreadsheet: a text cell that a spreadsheet would run as a
 * formula (starting with =, +, -, @, tab or carriage return) is prefixed with an apostrophe, so
 * that it opens as text. A cell holding `;` is quoted too: a spreadsheet set to a locale whose list
 * separator is `;` splits unquoted cells there, and a piece after it could start a formula the
 * prefix never saw.
 *
 * Numbers are exempt: a JavaScript number, and a decimal amount written with `csvDecimalCell`
 * (`-1500`, `-19.99`), is what a spreadsheet reads as a number, never as a formula, and a prefix
 * would turn a negative amount into text that no sum counts. Customer text (names, descriptions,
 * e-mails, wallet numbers) always goes through `csvCell`, whatever it looks like.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",;\r\n]/;

/** A decimal number as a spreadsheet reads one: an optional minus, digits, optional decimals. */
const DECIMAL_NUMBER = /^-?\d{1,40}(?:\.\d{1,40})?$/;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- cells are scalars; an object would show as [object Object], which is what String() has always given here
  let text = value instanceof Date ? value.toISOString() : String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/** A cell of a numeric column (an amount as decimal text): written as is when it is a number, as text through csvCell otherwise. */
export function csvDecimalCell(text: string | null | undefined): string {
  return typeof text === 'string' && DECIMAL_NUMBER.test(text) ? text : csvCell(text);
}
