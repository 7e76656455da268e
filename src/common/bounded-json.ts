import { DomainError } from './domain-error';

/**
 * How complex a request body may be. Parsing, transforming and validating a body costs time in
 * proportion to its nesting and to its number of members, all on the one event loop: a body of
 * 50,000 keys held it for seconds, one nested 1,500 deep overflowed the stack. Nothing this API
 * accepts comes close to these bounds.
 */
export interface BodyBounds {
  /** Levels of nested objects and arrays; the top-level value is level 1. */
  maxDepth: number;
  /** Members of one object (keys, duplicates included) or fields of one form. */
  maxKeysPerObject: number;
  /** Values in the whole document: every object member and every array element. */
  maxValues: number;
}

export const BODY_BOUNDS: BodyBounds = { maxDepth: 32, maxKeysPerObject: 1_000, maxValues: 10_000 };

export class BodyTooComplexError extends DomainError {
  readonly status = 400;
  readonly code = 'body_too_complex';
  readonly title = 'The request body is too complex';
}

export class QueryTooComplexError extends DomainError {
  readonly status = 400;
  readonly code = 'query_too_complex';
  readonly title = 'The query string is too complex';
}

/** What one pass over a JSON text found: an excess over the bounds, and the inexact numbers. */
export interface JsonScan {
  /** Why the text exceeds the bounds, or undefined. */
  excess: string | undefined;
  /** Start and end offsets (pairs, in order) of the number literals in value position that are inexact (`isExactNumberText`). */
  inexactNumbers: number[];
}

/**
 * Why a JSON text exceeds `bounds`, or undefined when it does not. One linear pass over the text,
 * before anything parses it; it does not check that the text is valid JSON (the parser does, once
 * the text is known to be small enough to parse), it only counts what is outside strings.
 */
export function jsonExcess(text: string, bounds: BodyBounds = BODY_BOUNDS): string | undefined {
  return scanJson(text, bounds).excess;
}

/**
 * `jsonExcess`'s pass, which also finds the number literals whose text is not exactly the value
 * JSON.parse makes of them (1500.0000000000001 becomes 1500): each literal is read once, so the
 * pass stays linear.
 */
export function scanJson(text: string, bounds: BodyBounds = BODY_BOUNDS): JsonScan {
  // Per open container: is it an object, how many members so far (commas + 1 once non-empty).
  const isObject: boolean[] = [];
  const members: number[] = [];
  const inexactNumbers: number[] = [];
  let values = 0;
  // The last character outside strings and whitespace (a string counts as its quote): a number
  // after ':' in an object, after '[' or ',' in an array or first at the top is a value.
  let previous = -1;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    const depth = isObject.length;
    if (char === QUOTE) {
      if (depth && members[depth - 1] === 0) members[depth - 1] = 1;
      i = endOfString(text, i);
      previous = QUOTE;
      continue;
    }
    if (isWhitespace(char)) continue;
    const before = previous;
    previous = char;
    if (char === MINUS || isDigit(char)) {
      const literalEnd = endOfNumberLiteral(text, i);
      const end = endOfNumber(text, literalEnd === -1 ? i : literalEnd - 1);
      const isValue = depth === 0 ? before === -1 : isObject[depth - 1] ? before === COLON : before === OPEN_BRACKET || before === COMMA;
      // A literal followed by more number characters is malformed: left for the parser to refuse.
      if (isValue && end === literalEnd && !isExactNumberText(text, i, end)) inexactNumbers.push(i, end);
      i = end - 1;
      previous = DIGIT_ZERO;
    }
    if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      if (depth && members[depth - 1] === 0) members[depth - 1] = 1;
      if (depth + 1 > bounds.maxDepth) return { excess: `JSON nests deeper than ${bounds.maxDepth} levels.`, inexactNumbers };
      isObject.push(char === OPEN_BRACE);
      members.push(0);
    } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) {
      if (!depth) continue;
      values += members[depth - 1];
      isObject.pop();
      members.pop();
    } else if (char === COMMA) {
      if (!depth) continue;
      members[depth - 1] += 1;
      if (isObject[depth - 1] && members[depth - 1] > bounds.maxKeysPerObject)
        return { excess: `A JSON object holds more than ${bounds.maxKeysPerObject} keys.`, inexactNumbers };
    } else if (depth && members[depth - 1] === 0) {
      members[depth - 1] = 1;
    } else {
      continue;
    }
    if (values + members.reduce(sumOfOpen, 0) > bounds.maxValues)
      return { excess: `The JSON document holds more than ${bounds.maxValues} values.`, inexactNumbers };
  }
  return { excess: undefined, inexactNumbers };
}

/**
 * A JSON body checked and ready to parse: refused (400 `body_too_complex`) when it exceeds
 * `bounds`; otherwise its text, where each inexact number literal is quoted, so that it arrives as
 * a string holding exactly what the client wrote and is refused like a string would be (a money
 * field reads its decimals, an integer field answers a type error) instead of being silently
 * rounded. Without inexact numbers, the very text given.
 */
export function checkedJsonText(text: string, bounds: BodyBounds = BODY_BOUNDS): { refusal: BodyTooComplexError } | { text: string } {
  const scan = scanJson(text, bounds);
  if (scan.excess !== undefined) return { refusal: new BodyTooComplexError(scan.excess) };
  if (scan.inexactNumbers.length === 0) return { text };
  const pieces: string[] = [];
  let at = 0;
  for (let k = 0; k < scan.inexactNumbers.length; k += 2) {
    pieces.push(text.slice(at, scan.inexactNumbers[k]), '"', text.slice(scan.inexactNumbers[k], scan.inexactNumbers[k + 1]), '"');
    at = scan.inexactNumbers[k + 1];
  }
  pieces.push(text.slice(at));
  return { text: pieces.join('') };
}

/** A JSON number literal; sticky, so that it is tried at one offset only, and deterministic: linear. */
const NUMBER_LITERAL = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// Both sticky and bounded by the literal (a search would run on into the rest of the text).
const MANTISSA = /-?[\d.]*/y;
const ZEROS_AND_POINT = /[0.]*/y;
const INTEGER_PART = /-?\d*/y;

/** End of the JSON number literal at `start` when one is there, else -1 (native matching: the literal may be a megabyte). */
function endOfNumberLiteral(text: string, start: number): number {
  NUMBER_LITERAL.lastIndex = start;
  return NUMBER_LITERAL.test(text) ? NUMBER_LITERAL.lastIndex : -1;
}

/**
 * The value of a valid JSON number literal `text[start, end)`, as offsets into its text: sign,
 * first and last significant digit (inclusive; count 0 for zero), their count, and where the
 * point goes: the value is 0.d1d2... x 10^point (infinite when the exponent has more digits than
 * a double could use).
 */
interface NumberLiteral {
  negative: boolean;
  first: number;
  last: number;
  count: number;
  point: number;
}

function readNumberLiteral(text: string, start: number, end: number): NumberLiteral {
  const negative = text.charCodeAt(start) === MINUS;
  MANTISSA.lastIndex = start;
  MANTISSA.test(text);
  const mantissaEnd = MANTISSA.lastIndex;
  let exponent = 0;
  if (mantissaEnd < end) {
    let digitsStart = mantissaEnd + 1;
    const sign = text.charCodeAt(digitsStart);
    if (sign === PLUS || sign === MINUS) digitsStart++;
    while (digitsStart < end - 1 && text.charCodeAt(digitsStart) === DIGIT_ZERO) digitsStart++;
    // Past 15 digits no double is anything but zero or infinite: the exact size no longer matters.
    const magnitude = end - digitsStart > 15 ? Infinity : Number(text.slice(digitsStart, end));
    exponent = sign === MINUS ? -magnitude : magnitude;
  }
  ZEROS_AND_POINT.lastIndex = negative ? start + 1 : start;
  ZEROS_AND_POINT.test(text);
  const first = ZEROS_AND_POINT.lastIndex;
  if (first >= mantissaEnd) return { negative, first: -1, last: -1, count: 0, point: 0 };
  let last = mantissaEnd - 1;
  while (text.charCodeAt(last) === DIGIT_ZERO || text.charCodeAt(last) === DOT) last--;
  INTEGER_PART.lastIndex = start;
  INTEGER_PART.test(text);
  const intEnd = INTEGER_PART.lastIndex;
  const dot = intEnd < mantissaEnd ? intEnd : -1;
  const dotBetween = dot !== -1 && first < dot && dot < last ? 1 : 0;
  const point = (first < intEnd ? intEnd - first : dot + 1 - first) + exponent;
  return { negative, first, last, count: last - first + 1 - dotBetween, point };
}

/** Whether two literals denote the same value, digit by digit (the point skipped). */
function sameNumber(a: string, x: NumberLiteral, b: string, y: NumberLiteral): boolean {
  if (x.count === 0 || y.count === 0) return x.count === y.count;
  if (x.negative !== y.negative || x.count !== y.count || x.point !== y.point) return false;
  for (let i = x.first, j = y.first; i <= x.last; i++, j++) {
    if (a.charCodeAt(i) === DOT) i++;
    if (b.charCodeAt(j) === DOT) j++;
    if (a.charCodeAt(i) !== b.charCodeAt(j)) return false;
  }
  return true;
}

/**
 * Whether the JSON number literal `text[start, end)` denotes exactly the value of the double it
 * parses to, judged by that double's shortest decimal (`String(Number(text))`): '1500.0' and
 * '1.5e3' are, while '1500.0000000000001' (1500), '9007199254740993' (…992) and '1e400'
 * (Infinity) are not. By digits, without float arithmetic; text that is no JSON number counts as
 * exact (the parser refuses it).
 */
export function isExactNumberText(text: string, start = 0, end = text.length): boolean {
  if (endOfNumberLiteral(text, start) !== end) return true;
  const literal = start === 0 && end === text.length ? text : text.slice(start, end);
  const printed = String(Number(literal));
  if (printed === literal) return true;
  // 'Infinity' and '-Infinity' are no literal: a finite text never denotes them.
  if (endOfNumberLiteral(printed, 0) !== printed.length) return false;
  return sameNumber(text, readNumberLiteral(text, start, end), printed, readNumberLiteral(printed, 0, printed.length));
}

/**
 * Why a form (application/x-www-form-urlencoded) text or a URL's query string exceeds `bounds`,
 * or undefined: each is an object of its fields.
 */
export function formExcess(text: string, bounds: BodyBounds = BODY_BOUNDS, what = 'A form'): string | undefined {
  let fields = text.length ? 1 : 0;
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) {
    if (++fields > bounds.maxKeysPerObject) return `${what} holds more than ${bounds.maxKeysPerObject} fields.`;
  }
  return undefined;
}

/** The refusal (400 `body_too_complex`) of a body in which a check above found an excess. */
export function bodyRefusal(excess: string | undefined): BodyTooComplexError | undefined {
  return excess === undefined ? undefined : new BodyTooComplexError(excess);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_ZERO = 0x30;
const DIGIT_NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

function isDigit(char: number): boolean {
  return char >= DIGIT_ZERO && char <= DIGIT_NINE;
}

/** End (exclusive) of the run of number characters that starts at `start`: digits, signs, '.', 'e'. */
function endOfNumber(text: string, start: number): number {
  let at = start + 1;
  for (;;) {
    const char = text.charCodeAt(at);
    if (!(isDigit(char) || char === DOT || char === LOWER_E || char === UPPER_E || char === PLUS || char === MINUS)) return at;
    at++;
  }
}

function isWhitespace(char: number): boolean {
  return char === 0x20 || char === 0x0a || char === 0x0d || char === 0x09;
}

// Open containers are few (at most maxDepth), so summing them per structural character stays linear.
function sumOfOpen(total: number, count: number): number {
  return total + count;
}

/** Index of the quote closing the string that opens at `start` (or the end of the text). */
function endOfString(text: string, start: number): number {
  let at = start + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    at = quote + 1;
  }
}
