import { createHash, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { TestService } from '../support/test-service';
import { inject, problemShapeFailure, type InjectedAnswer } from './hostile-harness';

/**
 * Generators of hostile requests for the fuzz suite, and the one check every answer must pass.
 * Everything stays within 32 levels of nesting and 1,000 keys per object: beyond, the HTTP
 * layer's own limits answer (another part of issue 10).
 */

/**
 * Cases per property: 200 in `npm test`, so that every property runs in every run at a cost of
 * seconds; CI runs the fuzz files again with FUZZ_RUNS=2000 in a step of its own (.ci/run), and a
 * longer local hunt raises it further. A value that is not a positive integer is refused rather
 * than silently running the default.
 */
export const FUZZ_RUNS = fuzzRuns(process.env.FUZZ_RUNS);

function fuzzRuns(value: string | undefined): number {
  if (value === undefined || value === '') return 200;
  if (!/^[1-9]\d*$/.test(value)) throw new Error(`FUZZ_RUNS must be a positive integer (cases per property), not ${JSON.stringify(value)}`);
  return Number(value);
}

/**
 * A fixed seed per property (derived from its name), so CI is reproducible. `FUZZ_SEED` replaces
 * it for every property: give it the seed fast-check printed with a failure (and `FUZZ_PATH` the
 * printed path to replay just the counterexample), or any number for a new hunt.
 */
export function seedFor(property: string): number {
  if (process.env.FUZZ_SEED !== undefined && process.env.FUZZ_SEED !== '') return Number(process.env.FUZZ_SEED) | 0;
  return createHash('sha256').update(property).digest().readInt32BE(0);
}

/** fast-check parameters of one property: fast-check prints the seed and path of a failure. */
export function fuzzParameters(property: string): fc.Parameters<unknown> {
  return { numRuns: FUZZ_RUNS, seed: seedFor(property), ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}) };
}

// ----------------------------------------------------------------------------------- values

/** A JSON number literal JavaScript cannot hold exactly, spliced into the JSON text as it is. */
export class RawJsonNumber {
  constructor(readonly literal: string) {}
}

const RAW_MARK = '\u0001raw\u0001';

/** JSON text of a value, with RawJsonNumber written verbatim (1e400, 30-digit integers...). */
export function toJsonText(value: unknown): string {
  const text = JSON.stringify(value, (_key, v) => (v instanceof RawJsonNumber ? `${RAW_MARK}${v.literal}${RAW_MARK}` : v));
  return text === undefined ? '' : text.replace(new RegExp(`"${RAW_MARK}([^"]*)${RAW_MARK}"`, 'g'), '$1');
}

/** An object whose own keys are exactly these, `__proto__` included (an object literal would set the prototype instead). */
export function objectWithKeys(entries: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

const utf16Unit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));

/** Text that breaks databases, parsers and logs: NUL, lone surrogates, control and bidi characters, huge. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udfff',
    '\udc00\ud800',
    '\ud83c',
    '',
    ' ',
    ' \t\n ',
    'null',
    'NaN',
    'Infinity',
    '-1',
    '0',
    '1e309',
    '0x10',
    '1_000',
    '__proto__',
    '{}',
    '[]',
    "'; DROP TABLE orders; --",
    '%00',
    '\\u0000',
    '🎫',
    '\u202e',
    '\uffff',
    '\ufeff',
    '\r\n',
    '../../etc/passwd',
  ),
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({ unit: utf16Unit, maxLength: 24 }),
  fc.integer({ min: 256, max: 20_000 }).map((n) => 'x'.repeat(n)),
);

/** A valid text with one hostile character put inside it. */
export const corruptedText = (valid: string): fc.Arbitrary<string> =>
  fc
    .tuple(fc.nat({ max: valid.length }), fc.constantFrom('\u0000', '\ud800', '\udfff', '\udc00\ud800', '\u0000\u0000'))
    .map(([at, bad]) => `${valid.slice(0, at)}${bad}${valid.slice(at)}`);

export const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 2,
    5e-324,
    0.1,
    1.005,
    12.345,
    2147483648,
    -2147483649,
    1e21,
    1e-7,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc
    .constantFrom(
      '1e400',
      '-1e400',
      '123456789012345678901234567890',
      `0.${'0'.repeat(400)}1`,
      `1${'0'.repeat(400)}`,
      '1E2',
      '-0.0',
      '1.0000000000000000000001',
    )
    .map((literal) => new RawJsonNumber(literal)),
);

const nestedArrays = fc.integer({ min: 1, max: 24 }).map((depth) => {
  let value: unknown = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
});

export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(true, false, null, [], {}, [[]], [null], { a: {} }, ['x'], [1, 2, 3], { toString: 'x' }, { valueOf: 1 }),
  nestedArrays,
);

/** Arbitrary JSON within the depth the HTTP layer admits, with any code point in its texts. */
export const arbitraryJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }),
);

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(hostileText, hostileNumber, wrongType, arbitraryJson);

export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'valueOf',
    'hasOwnProperty',
    '__defineGetter__',
    'isPrototypeOf',
    'a\u0000',
    '',
    ' ',
    'amount ',
    'AMOUNT',
    '\ud800',
    'then',
  ),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: utf16Unit, maxLength: 6 }),
);

// -------------------------------------------------------------------------------- mutations

type Body = Record<string, unknown>;
export type Mutation = (body: Body) => unknown;

/**
 * One change to a valid body: a field replaced by something hostile (or its own text with a NUL
 * or a lone surrogate inside), a field removed, or an extra key.
 */
export function mutationOf(sample: Body): fc.Arbitrary<Mutation> {
  const keys = Object.keys(sample);
  const extra = fc.tuple(hostileKey, hostileValue).map(
    ([key, value]): Mutation =>
      (body) =>
        objectWithKeys([...Object.entries(body), [key, value]]),
  );
  // A route without a body (freeze, terminate): all there is to mutate is an extra key.
  if (keys.length === 0) return extra;
  const replace = fc.tuple(fc.constantFrom(...keys), hostileValue).map(([key, value]): Mutation => (body) => ({ ...body, [key]: value }));
  const textKeys = keys.filter((k) => typeof sample[k] === 'string');
  const corrupt = textKeys.length
    ? fc
        .constantFrom(...textKeys)
        .chain((key) => corruptedText(String(sample[key])).map((value): Mutation => (body) => ({ ...body, [key]: value })))
    : replace;
  const remove = fc.constantFrom(...keys).map(
    (key): Mutation =>
      (body) =>
        Object.fromEntries(Object.entries(body).filter(([k]) => k !== key)),
  );
  const arrays = Array.isArray(sample.distribution) ? [distributionMutation] : [];
  return fc.oneof(replace, corrupt, remove, extra, ...arrays);
}

/** The beneficiaries of a distribution: an entry replaced, corrupted, duplicated, or the list nested. */
const distributionMutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc
    .tuple(fc.nat({ max: 3 }), hostileValue)
    .map(([at, value]): Mutation => (body) => ({ ...body, distribution: withEntry(body.distribution, at, () => value) })),
  fc.tuple(fc.nat({ max: 3 }), fc.constantFrom('matricule', 'rate'), hostileValue).map(([at, field, value]): Mutation => (body) => ({
    ...body,
    distribution: withEntry(body.distribution, at, (entry) => ({ ...(entry as Body), [field]: value })),
  })),
  fc.tuple(fc.nat({ max: 3 }), hostileKey, hostileValue).map(([at, key, value]): Mutation => (body) => ({
    ...body,
    distribution: withEntry(body.distribution, at, (entry) => objectWithKeys([...Object.entries(entry as Body), [key, value]])),
  })),
  fc.constantFrom<Mutation>(
    (body) => ({ ...body, distribution: [[]] }),
    (body) => ({ ...body, distribution: [body.distribution] }),
    (body) => ({
      ...body,
      distribution: Array.isArray(body.distribution) ? [...body.distribution, ...body.distribution] : body.distribution,
    }),
    (body) => ({ ...body, distribution: Array.from({ length: 101 }, (_, i) => ({ matricule: `MAT${i}`, rate: '0.5' })) }),
    (body) => ({ ...body, distribution: [] }),
    (body) => ({ ...body, distribution: {} }),
  ),
);

function withEntry(list: unknown, at: number, change: (entry: unknown) => unknown): unknown[] {
  const entries = Array.isArray(list) ? [...list] : [];
  const index = Math.min(at, entries.length);
  entries[index] = change(entries[index] ?? {});
  return entries;
}

/**
 * A whole request body: mostly the valid body with one to three mutations, else arbitrary JSON,
 * an arbitrary object or text that is not JSON at all. Returned as the JSON text to send.
 */
export function hostileBody(validBody: () => Body): fc.Arbitrary<string> {
  const sample = validBody();
  const mutated = fc.array(mutationOf(sample), { minLength: 1, maxLength: 3 }).map((mutations) => {
    let body: unknown = validBody();
    for (const mutate of mutations) body = isPlainObject(body) ? mutate(body) : body;
    return toJsonText(body);
  });
  const anyObject = fc.array(fc.tuple(hostileKey, hostileValue), { maxLength: 8 }).map((entries) => toJsonText(objectWithKeys(entries)));
  const notJson = fc.oneof(
    fc.constantFrom(
      '',
      '{',
      '{"amount":',
      'null',
      '"text"',
      '[]',
      '{"a":1}{"b":2}',
      '{"a":1,}',
      "{'a':1}",
      '\u0000',
      '{"a":"\\ud800"}',
      '{"a":"\\u0000"}',
      '{"__proto__":{"admin":true}}',
      '{"constructor":{"prototype":{"x":1}}}',
    ),
    fc.string({ unit: 'binary', maxLength: 40 }),
  );
  return fc.oneof(
    { weight: 6, arbitrary: mutated },
    { weight: 1, arbitrary: arbitraryJson.map(toJsonText) },
    { weight: 1, arbitrary: anyObject },
    { weight: 1, arbitrary: notJson },
  );
}

const isPlainObject = (value: unknown): value is Body => typeof value === 'object' && value !== null && !Array.isArray(value);

// ------------------------------------------------------------------------------- URL pieces

/** Percent-encodes any UTF-16 text, a lone surrogate as the bytes a careless client would send. */
export function encodeUrlText(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff)
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    else out += encodeURIComponent(char);
  }
  return out;
}

/** A query value or path segment as it appears in the URL (already encoded, possibly malformed). */
export const hostileUrlText: fc.Arbitrary<string> = fc.oneof(
  hostileText.filter((text) => text.length <= 2000).map(encodeUrlText),
  fc.constantFrom(
    '%00',
    '%ED%A0%80',
    '%C0%80',
    '%FF',
    '%',
    '%zz',
    '%E2%80%AE',
    '+',
    '%2F',
    '..',
    '%2e%2e',
    '%25',
    'a&b=c',
    '=',
    '%26',
    '%3D',
  ),
  fc
    .array(fc.constantFrom('%00', '%ED%A0%80', 'a', '9', '-', '%FF', '~', '.'), { minLength: 1, maxLength: 30 })
    .map((parts) => parts.join('')),
);

/** Builds `path?k=v&...` from already encoded parts (a key may repeat). */
export function urlWithQuery(path: string, params: [string, string][]): string {
  return params.length ? `${path}?${params.map(([k, v]) => `${k}=${v}`).join('&')}` : path;
}

// ------------------------------------------------------------------------------------ check

/** Every provider request the sandboxes recorded so far. */
export type ProviderCallCount = () => number;

/**
 * What every answer to hostile input must be: below 500; an error is problem+json with `status`
 * and `code`; a refusal (4xx) made no provider call, unless the refusal is the provider's own
 * verdict (`provider_*` codes: the provider was asked and said no).
 */
export function answerFailure(answer: InjectedAnswer, providerCalls: number): string | undefined {
  if (answer.status >= 500) return `answered ${answer.status}: ${answer.raw.slice(0, 500)}`;
  if (answer.status >= 400) {
    const shape = problemShapeFailure(answer);
    if (shape) return `answered ${answer.status} but not a problem: ${shape}: ${answer.raw.slice(0, 300)}`;
    const providersVerdict = typeof answer.body.code === 'string' && answer.body.code.startsWith('provider_');
    if (providerCalls > 0 && !providersVerdict)
      return `refused with ${answer.status} ${answer.body.code} after ${providerCalls} provider call(s)`;
  }
  return undefined;
}

/** Answers seen, by route, status and code: printed with FUZZ_STATS=1 to see what the generators reach. */
export const statusTally = new Map<string, number>();

export function printStatusTally(): void {
  if (!process.env.FUZZ_STATS) return;
  console.log(
    [...statusTally.entries()]
      .sort()
      .map(([k, n]) => `${String(n).padStart(6)}  ${k}`)
      .join('\n'),
  );
}

/** Sends one request and throws (for fast-check to report and shrink) when the answer breaks the rules. */
export async function sendAndCheck(
  service: TestService,
  providerCalls: ProviderCallCount,
  request: { method: 'GET' | 'POST'; url: string; token?: string; key?: string | null; payload?: string },
): Promise<InjectedAnswer> {
  const before = providerCalls();
  const answer = await inject(service, {
    method: request.method,
    url: request.url,
    token: request.token,
    key: request.key === null ? undefined : (request.key ?? randomUUID()),
    payload: request.payload,
  });
  const route = request.url
    .split('?')[0]
    .replace(
      /^(\/v1\/(?:cards|card-users))\/[^/]+(\/[a-z]+)?$/,
      (_all, prefix: string, action?: string) => `${prefix}/{id}${action ?? ''}`,
    );
  const statusKey = `${request.method} ${route} ${answer.status} ${answer.body?.code ?? ''}`;
  statusTally.set(statusKey, (statusTally.get(statusKey) ?? 0) + 1);
  const failure = answerFailure(answer, providerCalls() - before);
  if (failure)
    throw new Error(
      `${request.method} ${request.url.slice(0, 300)}${request.payload !== undefined ? ` body ${JSON.stringify(request.payload.slice(0, 400))}` : ''}: ${failure}`,
    );
  return answer;
}
