import type { AppConfig } from '../config/app-config';
import { UNPAIRED_SURROGATES } from '../common/unicode';

/**
 * Secrets never reach a log line or a stored record. Three nets:
 * - by key: any field whose name looks like it holds a card secret, a credential or a token is
 *   replaced (card numbers keep their last four), at any depth (`isSecretKeyName`);
 * - by value: the exact values of configured secrets and of every provider token, link apikey and
 *   card number this process has seen are scrubbed from the final text, wherever they hide;
 * - in what the provider wrote (`scrubText`, `scrubProviderBody`): every run of three or more
 *   digits is masked, unless it is a value we sent in that request or an identifier we hold.
 */
export const REDACTED = '[REDACTED]';

/**
 * Key names of card secrets, credentials and tokens, matched on the name lower-cased, without
 * accents and separators (`card_cvv`, `securityCode`, `x-api-key`, `Authorization`, `cvc2`...):
 * a pattern, not a list of exact names, because the provider may name a field its own way.
 */
const SECRET_KEY_PART =
  /cvv|cvc|secret|passw|passcode|motdepasse|token|jeton|apikey|securitycode|codesecurite|codedesecurite|cryptogram|privatekey|accesskey|auth|cookie|credential|idnumber|signature|session|bearer/;
/** Short names that only mean a secret as a whole word of the key (`pin`, not `shipping`). */
const SECRET_KEY_WORDS = new Set(['pin', 'otp', 'cvn', 'csc', 'pwd', 'mdp']);
const CARD_NUMBER_KEY_PART = /cardnumber|cardno|numerocarte|numerodecarte/;

/** The words of a key name: `securityCode` and `security-code` are `security`, `code`. */
function keyWords(key: string): string[] {
  return key
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** True for a key whose value is a card secret, a credential or a token (card numbers included). */
export function isSecretKeyName(key: string): boolean {
  return classifiedKey(secretKeyNames, key, (name) => {
    const words = keyWords(name);
    const compact = words.join('');
    return SECRET_KEY_PART.test(compact) || words.some((w) => SECRET_KEY_WORDS.has(w)) || isCardNumberKeyName(name);
  });
}

/**
 * True for a header whose value is a credential: a secret-looking name, or one holding the word
 * `key` (`X-Key`, `Key-Id`), which in a header names a credential, while in a body it is as often data.
 */
export function isCredentialHeaderName(name: string): boolean {
  return isSecretKeyName(name) || keyWords(name).includes('key');
}

/** True for a key whose value is a card number (`card_number`, `cardNumber`, `pan`). */
export function isCardNumberKeyName(key: string): boolean {
  return classifiedKey(cardNumberKeyNames, key, (name) => {
    const words = keyWords(name);
    return CARD_NUMBER_KEY_PART.test(words.join('')) || words.includes('pan');
  });
}

/**
 * What was decided of a key name, kept: every log line, stored body and provider answer asks about
 * the same few dozen keys, and deciding one takes a Unicode normalisation and four patterns. Bounded,
 * so that hostile bodies full of new keys cannot grow it; past the bound a key is decided each time.
 */
const KEY_DECISIONS_KEPT = 4_096;
const KEY_DECIDED_MAX_LENGTH = 128;
const secretKeyNames = new Map<string, boolean>();
const cardNumberKeyNames = new Map<string, boolean>();

function classifiedKey(decided: Map<string, boolean>, key: string, decide: (key: string) => boolean): boolean {
  const known = decided.get(key);
  if (known !== undefined) return known;
  const decision = decide(key);
  if (decided.size < KEY_DECISIONS_KEPT && key.length <= KEY_DECIDED_MAX_LENGTH) decided.set(key, decision);
  return decision;
}

/** 13 to 19 digits, optionally grouped by spaces or dashes, not inside a longer word (a PAN's shape). */
const CARD_NUMBER_LIKE = /(?<![A-Za-z0-9])\d(?:[ -]?\d){12,18}(?![A-Za-z0-9])/g;
/** Secret query parameters of a URL (our callback URLs carry `token=`). */
const SECRET_QUERY_VALUE = /([?&](?:token|apikey|api_key|secret)=)[^&#\s"'<>]*/gi;

/** The configuration's secrets: never forgotten. */
const configuredSecretValues = new Set<string>();
/** Tokens, link apikeys and card numbers seen, the most recently used last. */
const knownSecretValues = new Set<string>();
/** Every log line is matched against them all: the newest few hundred are kept. */
const MAX_KNOWN_SECRET_VALUES = 500;
let scrubPattern: RegExp | undefined;

/** Registers a value that must never be printed (provider token, link apikey, card number, ...). */
export function registerSecretValue(value: string | undefined | null): void {
  if (!value || value.length < 6 || configuredSecretValues.has(value)) return;
  if (knownSecretValues.has(value)) {
    // Used again: it moves to the newest end, so that the value in use is the last one forgotten.
    knownSecretValues.delete(value);
    knownSecretValues.add(value);
    return;
  }
  knownSecretValues.add(value);
  if (knownSecretValues.size > MAX_KNOWN_SECRET_VALUES) knownSecretValues.delete(knownSecretValues.values().next().value as string);
  rebuildScrubPattern();
}

function rebuildScrubPattern(): void {
  scrubPattern = new RegExp(
    [...configuredSecretValues, ...knownSecretValues]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join('|'),
    'g',
  );
}

/** Registers every secret of the configuration (idempotent): whatever path one takes, it is scrubbed. */
export function registerConfiguredSecrets(
  config: Pick<AppConfig, 'provider' | 'auth' | 'callbackSigningSecret' | 'dataEncryptionKey'> &
    Partial<Pick<AppConfig, 'callbackSigningPreviousSecrets' | 'dataEncryptionPreviousKeys'>>,
): void {
  const before = configuredSecretValues.size;
  for (const secret of [
    config.provider.secretKey,
    config.provider.apiKey,
    config.provider.spAuthToken,
    config.callbackSigningSecret,
    ...(config.callbackSigningPreviousSecrets ?? []),
    config.auth.jwtSecret,
    ...(config.auth.jwtPreviousSecrets ?? []),
    config.dataEncryptionKey.toString('base64'),
    ...(config.dataEncryptionPreviousKeys ?? []).map((key) => key.toString('base64')),
  ]) {
    if (secret && secret.length >= 6) configuredSecretValues.add(secret);
  }
  if (configuredSecretValues.size !== before) rebuildScrubPattern();
}

export function scrubSecretValues(text: string): string {
  return scrubPattern ? text.replace(scrubPattern, REDACTED) : text;
}

export function maskCardNumber(value: string): string {
  const digits = value.replace(/\D/g, '');
  return digits.length >= 4 ? `**** **** **** ${digits.slice(-4)}` : REDACTED;
}

/** Masks anything shaped like a card number in a text (keeping its last four digits). */
export function maskCardNumbersIn(text: string): string;
export function maskCardNumbersIn(text: string | undefined): string | undefined;
export function maskCardNumbersIn(text: string | undefined): string | undefined {
  return text === undefined ? undefined : text.replace(CARD_NUMBER_LIKE, (match) => maskCardNumber(match));
}

/**
 * What a provider text may keep, for one exchange: the digits we sent or hold, and the digits the
 * answer itself delivered as secrets (which no exception keeps).
 */
export interface ProviderTextContext {
  /** Digit runs of numeric values we sent (amount, phone, service code): kept where they stand alone. */
  readonly allowedRuns: ReadonlySet<string>;
  /** Texts we sent or hold that hold digits (references, identifiers, emails): an occurrence keeps its digits. */
  readonly allowedPhrases: readonly string[];
  /** Digits the answer delivers as secrets (a new card's number and CVV): masked even when we sent them. */
  readonly secretRuns: ReadonlySet<string>;
  /** Other texts the answer delivers as secrets, replaced wherever they appear in it. */
  readonly secretTexts: readonly string[];
}

export const NO_TEXT_CONTEXT: ProviderTextContext = { allowedRuns: new Set(), allowedPhrases: [], secretRuns: new Set(), secretTexts: [] };

/** Shortest digit run masked: a CVV has three digits. */
const MASKED_RUN_DIGITS = 3;
/** A group of runs this long (`41 11 11 ...`) is a card number's length, whatever its runs. */
const CARD_LIKE_GROUP_DIGITS = 13;
/** Separator characters between runs of one group: `4111 1111`, `4111.1111`, `4111\u00A01111`. */
const MAX_SEPARATOR_CHARS = 3;
const NON_ASCII_DIGIT = /^\p{Nd}$/u;
const GROUP_SEPARATOR = /^[\p{Zs}\p{Pd}\p{Cf}\t.,_/'\u2019\u00B7\u2022]$/u;

/** Length in UTF-16 units of the code point at `i` when it is a decimal digit (any script), else 0. */
function digitAt(text: string, i: number): number {
  const code = text.charCodeAt(i);
  if (code >= 48 && code <= 57) return 1;
  if (code < 128) return 0;
  const point = String.fromCodePoint(text.codePointAt(i)!);
  return NON_ASCII_DIGIT.test(point) ? point.length : 0;
}

function separatorAt(text: string, i: number): number {
  const point = String.fromCodePoint(text.codePointAt(i)!);
  return GROUP_SEPARATOR.test(point) ? point.length : 0;
}

/** Positions covered by an occurrence of an allowed phrase. */
function protectedPositions(text: string, phrases: readonly string[]): Uint8Array | undefined {
  let marks: Uint8Array | undefined;
  for (const phrase of phrases) {
    if (phrase.length < MASKED_RUN_DIGITS) continue;
    for (let at = text.indexOf(phrase); at >= 0; at = text.indexOf(phrase, at + phrase.length)) {
      marks ??= new Uint8Array(text.length);
      marks.fill(1, at, at + phrase.length);
    }
  }
  return marks;
}

interface DigitRun {
  start: number;
  end: number;
  digits: number;
}

/**
 * The one rule over the provider's free text: every run of three or more digits is masked, unless
 * it is a value we sent (`allowedRuns`) or lies in an occurrence of a text we sent or hold
 * (`allowedPhrases`); a run the answer delivered as a secret is masked whatever its length. Runs
 * joined by a few separators (a grouped card number) form a group: a group as long as a card
 * number is masked whole, and masked runs next to each other become one `[REDACTED]`. One pass.
 */
export function maskDigitRuns(text: string, context: ProviderTextContext = NO_TEXT_CONTEXT): string {
  const marks = protectedPositions(text, context.allowedPhrases);
  let out = '';
  let copiedTo = 0;
  let i = 0;
  while (i < text.length) {
    if (digitAt(text, i) === 0) {
      i++;
      continue;
    }
    const runs: DigitRun[] = [];
    let j = i;
    for (;;) {
      const run: DigitRun = { start: j, end: j, digits: 0 };
      for (let width = digitAt(text, j); width > 0; width = j < text.length ? digitAt(text, j) : 0) {
        j += width;
        run.digits++;
      }
      run.end = j;
      runs.push(run);
      let k = j;
      let separators = 0;
      for (let width = k < text.length ? separatorAt(text, k) : 0; width > 0 && separators < MAX_SEPARATOR_CHARS;) {
        k += width;
        separators++;
        width = k < text.length ? separatorAt(text, k) : 0;
      }
      if (separators === 0 || k >= text.length || digitAt(text, k) === 0) break;
      j = k;
    }
    const masked = runs.map((run) => {
      const digits = text.slice(run.start, run.end);
      if (context.secretRuns.has(digits)) return true;
      if (marks && marks[run.start] === 1 && marks[run.end - 1] === 1) return false;
      return run.digits >= MASKED_RUN_DIGITS && !context.allowedRuns.has(digits);
    });
    if (runs.length > 1) {
      const whole = runs.map((run) => text.slice(run.start, run.end)).join('');
      const total = runs.reduce((sum, run) => sum + run.digits, 0);
      const protectedGroup = marks !== undefined && runs.every((run) => marks[run.start] === 1 && marks[run.end - 1] === 1);
      if (context.secretRuns.has(whole) || (total >= CARD_LIKE_GROUP_DIGITS && !protectedGroup && !context.allowedRuns.has(whole)))
        masked.fill(true);
    }
    for (let r = 0; r < runs.length; r++) {
      if (!masked[r]) continue;
      // Masked runs next to each other (and their separators) become one mark.
      let last = r;
      while (last + 1 < runs.length && masked[last + 1]) last++;
      out += text.slice(copiedTo, runs[r].start) + REDACTED;
      copiedTo = runs[last].end;
      r = last;
    }
    i = runs[runs.length - 1].end;
  }
  return copiedTo === 0 ? text : out + text.slice(copiedTo);
}

/**
 * What the provider wrote in free text, made safe: registered secret values and the answer's own
 * secrets, secret query values (our callback URLs echoed back), then `maskDigitRuns`.
 */
export function scrubText(text: string, context: ProviderTextContext = NO_TEXT_CONTEXT): string {
  let scrubbed = scrubSecretValues(text);
  for (const secret of context.secretTexts) if (secret.length >= MASKED_RUN_DIGITS) scrubbed = scrubbed.replaceAll(secret, REDACTED);
  return maskDigitRuns(scrubbed.replace(SECRET_QUERY_VALUE, `$1${REDACTED}`), context);
}

/** A numeric text: digits with the signs and separators of amounts and phone numbers. */
const NUMERIC_TEXT = /^[\s\d+().,-]+$/;
const DIGIT_RUN = /\d{3,}/g;

/**
 * What a request sends that its answer may repeat: digit runs of numeric values (amount, phone,
 * service code) and texts holding digits (references, identifiers in the path, emails), each
 * without the secrets it may carry. Values under a secret-looking key (credentials, OTP) are left
 * out: the provider repeating them is a leak.
 */
export function sentTextContext(sent: unknown): Pick<ProviderTextContext, 'allowedRuns' | 'allowedPhrases'> {
  const allowedRuns = new Set<string>();
  const allowedPhrases = new Set<string>();
  const visit = (value: unknown, depth: number) => {
    if (depth > 16 || value === null || value === undefined) return;
    if (typeof value === 'string' || typeof value === 'number') {
      const text = redactUrl(String(value));
      if (!/\d{3}/.test(text)) return;
      if (NUMERIC_TEXT.test(text)) for (const run of text.match(DIGIT_RUN) ?? []) allowedRuns.add(run);
      else allowedPhrases.add(text);
      return;
    }
    if (Array.isArray(value)) for (const item of value) visit(item, depth + 1);
    else if (typeof value === 'object')
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) if (!isSecretKeyName(key)) visit(item, depth + 1);
  };
  visit(sent, 0);
  return { allowedRuns, allowedPhrases: [...allowedPhrases] };
}

/**
 * The fields of an answer we understand (the typed fields a client reads), as a tree:
 * - `secret`: a value the service exists to receive (a token, a link's apikey, a card's number and
 *   CVV): kept exact, and registered with the scrubber before anything else of the answer is read;
 * - `id`: an identifier we will hold (kept, and its occurrences in the answer's texts keep their digits);
 * - `text`: a typed value (amount, balance, date, a name we stored): kept, without registered secret values;
 * - `code`: a status-like code: a number, or a string of at most three digits; else free text;
 * - `{ fields, items }`: an object's known members, an array's items.
 * Everything else the provider wrote is free text (`scrubText`), and every member whose name looks
 * like a secret (`isSecretKeyName`) is masked, at any depth.
 */
export type AnswerShape =
  'secret' | 'id' | 'text' | 'code' | { readonly fields?: Readonly<Record<string, AnswerShape>>; readonly items?: AnswerShape };

const MAX_DEPTH = 32;

/**
 * What the provider said, made safe once, where it enters the service. The secrets the answer
 * delivers (by `shape`) are registered first, so a message repeating them in the same answer is
 * scrubbed too; then the fields of `shape` are kept as typed, and every other text, key and number
 * passes `scrubText` with the digits `sent` in the request allowed (see `sentTextContext`).
 */
export function scrubProviderBody<T>(
  value: T,
  shape: AnswerShape = {},
  sent?: Pick<ProviderTextContext, 'allowedRuns' | 'allowedPhrases'>,
): T {
  const secrets: string[] = [];
  const ids: string[] = [];
  collectTyped(value, shape, secrets, ids, 0);
  for (const secret of secrets) registerSecretValue(secret);
  // Digit secrets are masked as runs (a CVV inside a longer number is not one); others as texts.
  const secretRuns = new Set<string>();
  const secretTexts: string[] = [];
  for (const secret of secrets) {
    const digits = secret.replace(/[\s.-]/g, '');
    if (/^\d+$/.test(digits)) secretRuns.add(digits);
    else secretTexts.push(secret);
  }
  const context: ProviderTextContext = {
    allowedRuns: sent?.allowedRuns ?? new Set(),
    allowedPhrases: [...(sent?.allowedPhrases ?? []), ...ids.filter((id) => /\d{3}/.test(id))],
    secretRuns,
    secretTexts,
  };
  return scrubShaped(value, shape, context, 0) as T;
}

function collectTyped(value: unknown, shape: AnswerShape, secrets: string[], ids: string[], depth: number): void {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object' || typeof shape !== 'object') {
    if (typeof value === 'string' && value !== '' && shape === 'secret') secrets.push(value);
    if (typeof value === 'string' && shape === 'id') ids.push(scrubSecretValues(value));
    return;
  }
  if (Array.isArray(value)) {
    if (shape.items) for (const item of value as unknown[]) collectTyped(item, shape.items, secrets, ids, depth + 1);
    return;
  }
  for (const [key, member] of Object.entries(value as Record<string, unknown>))
    if (shape.fields && Object.hasOwn(shape.fields, key)) collectTyped(member, shape.fields[key], secrets, ids, depth + 1);
}

function scrubShaped(value: unknown, shape: AnswerShape, context: ProviderTextContext, depth: number): unknown {
  if (depth > MAX_DEPTH) return REDACTED;
  if (value === null || typeof value === 'boolean') return value;
  switch (shape) {
    case 'secret':
      return typeof value === 'string' ? value : scrubFree(value, context, depth);
    case 'id':
    case 'text':
      if (typeof value === 'string') return scrubSecretValues(value);
      return typeof value === 'number' ? value : scrubFree(value, context, depth);
    case 'code':
      if (typeof value === 'number' || (typeof value === 'string' && /^\d{1,3}$/.test(value))) return value;
      return scrubFree(value, context, depth);
  }
  if (Array.isArray(value) && shape.items) return (value as unknown[]).map((item) => scrubShaped(item, shape.items!, context, depth + 1));
  if (typeof value === 'object' && !Array.isArray(value) && shape.fields) {
    const fields = shape.fields;
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, member]) =>
        Object.hasOwn(fields, key)
          ? [key, scrubShaped(member, fields[key], context, depth + 1)]
          : scrubFreeMember(key, member, context, depth),
      ),
    );
  }
  return scrubFree(value, context, depth);
}

/** A member the shape does not know: its name is free text, its value masked when the name looks secret. */
function scrubFreeMember(key: string, member: unknown, context: ProviderTextContext, depth: number): [string, unknown] {
  const value =
    isSecretKeyName(key) && member !== null && member !== undefined && typeof member !== 'boolean'
      ? REDACTED
      : scrubFree(member, context, depth + 1);
  return [scrubText(key, context), value];
}

function scrubFree(value: unknown, context: ProviderTextContext, depth: number): unknown {
  if (depth > MAX_DEPTH) return REDACTED;
  if (typeof value === 'string') return scrubText(value, context);
  if (typeof value === 'number') return scrubText(String(value), context) === String(value) ? value : REDACTED;
  if (Array.isArray(value)) return (value as unknown[]).map((item) => scrubFree(item, context, depth + 1));
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, member]) => scrubFreeMember(key, member, context, depth)),
    );
  return value;
}

/** Deep copy with secret fields replaced; safe to log or store. */
export function redact<T>(value: T, depth = 0): T {
  if (depth > 12) return REDACTED as T;
  if (typeof value === 'string') return redactUrl(value) as T;
  if (Array.isArray(value)) return (value as unknown[]).map((v) => redact(v, depth + 1)) as T;
  if (value && typeof value === 'object' && !(value instanceof Date) && !Buffer.isBuffer(value)) {
    // Object.fromEntries defines own members: a `__proto__` key stays a member of the copy
    // instead of replacing its prototype (as an assignment would).
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, v]) => {
        if (isCardNumberKeyName(key))
          return [key, typeof v === 'string' ? maskCardNumber(v) : v === undefined || v === null ? v : REDACTED];
        // A flag (`hasApikey: true`) carries no secret.
        if (isSecretKeyName(key)) return [key, v === undefined || v === null || typeof v === 'boolean' ? v : REDACTED];
        return [key, redact(v, depth + 1)];
      }),
    ) as T;
  }
  return value;
}

/** Removes secret query parameters (callback tokens) from a URL, or from a text holding URLs, before it is logged or stored. */
export function redactUrl(url: string): string {
  // Most texts hold no `=`, hence no secret query value: they skip that pattern.
  return scrubSecretValues(url.includes('=') ? url.replace(SECRET_QUERY_VALUE, `$1${REDACTED}`) : url);
}

/**
 * Text PostgreSQL can store: `text` and `jsonb` refuse NUL, and `jsonb` refuses a lone UTF-16
 * surrogate. Each becomes U+FFFD, so a record is kept (altered visibly) instead of lost.
 */
export function storableText(text: string): string {
  return MAY_NOT_BE_STORABLE.test(text) ? text.replaceAll('\u0000', '\uFFFD').replace(UNPAIRED_SURROGATES, '\uFFFD') : text;
}

/** A NUL or any surrogate: only such a text needs storableText's two replacements. */
// eslint-disable-next-line no-control-regex -- NUL is what this looks for
const MAY_NOT_BE_STORABLE = /[\u0000\uD800-\uDFFF]/;

/**
 * A JSON value with every string and key made storable (see `storableText`): the value itself when
 * none needed it (nearly always), else a copy, changed where needed. Never changes `value`.
 */
export function storableJson<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) {
    const items = (value as unknown[]).map((v) => storableJson(v, depth + 1));
    return (items.some((item, i) => item !== value[i]) ? items : value) as T;
  }
  if (value && typeof value === 'object' && depth < 64) {
    const entries = Object.entries(value as Record<string, unknown>);
    const storable = entries.map(([k, v]) => [storableText(k), storableJson(v, depth + 1)] as const);
    return (storable.some(([k, v], i) => k !== entries[i][0] || v !== entries[i][1]) ? Object.fromEntries(storable) : value) as T;
  }
  return value;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
