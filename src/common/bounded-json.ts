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

/**
 * Why a JSON text exceeds `bounds`, or undefined when it does not. One linear pass over the text,
 * before anything parses it; it does not check that the text is valid JSON (the parser does, once
 * the text is known to be small enough to parse), it only counts what is outside strings.
 */
export function jsonExcess(text: string, bounds: BodyBounds = BODY_BOUNDS): string | undefined {
  // Per open container: is it an object, how many members so far (commas + 1 once non-empty).
  const isObject: boolean[] = [];
  const members: number[] = [];
  let values = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    const depth = isObject.length;
    if (char === QUOTE) {
      if (depth && members[depth - 1] === 0) members[depth - 1] = 1;
      i = endOfString(text, i);
      continue;
    }
    if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      if (depth && members[depth - 1] === 0) members[depth - 1] = 1;
      if (depth + 1 > bounds.maxDepth) return `JSON nests deeper than ${bounds.maxDepth} levels.`;
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
        return `A JSON object holds more than ${bounds.maxKeysPerObject} keys.`;
    } else if (depth && members[depth - 1] === 0 && !isWhitespace(char)) {
      members[depth - 1] = 1;
    } else {
      continue;
    }
    if (values + members.reduce(sumOfOpen, 0) > bounds.maxValues) return `The JSON document holds more than ${bounds.maxValues} values.`;
  }
  return undefined;
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
