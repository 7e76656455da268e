import type { AppConfig } from '../config/app-config';
import { UNPAIRED_SURROGATES } from '../common/unicode';

/**
 * Secrets never reach a log line or a stored record. Three nets:
 * - by key: any field whose name says it holds a secret is replaced (card numbers keep their last four);
 * - by value: the exact values of configured secrets and of every provider token this process has
 *   seen are scrubbed from the final text, wherever they hide (a URL, an error message, a header);
 * - by shape, in free text the provider wrote: anything shaped like a card number keeps its last
 *   four digits, a CVV/CVC value and a `token=` query value are blanked.
 */
export const REDACTED = '[REDACTED]';

const SECRET_KEYS = new Set(
  [
    'authorization',
    'x-api-key',
    'x-sp-auth-token',
    'cookie',
    'set-cookie',
    'private_secretkey',
    'public_apikey',
    'secretkey',
    'apikey',
    'api_key',
    'token',
    'access_token',
    'refresh_token',
    'password',
    'secret',
    'cvv',
    'cvc',
    'otp',
    // Identity document numbers of card users: stored encrypted, so never in clear elsewhere.
    'id_number',
    'idnumber',
  ].map((k) => k.toLowerCase()),
);
const CARD_NUMBER_KEYS = new Set(['card_number', 'cardnumber', 'pan']);

/** 13 to 19 digits, optionally grouped by spaces or dashes, not inside a longer word (a PAN's shape). */
const CARD_NUMBER_LIKE = /(?<![A-Za-z0-9])\d(?:[ -]?\d){12,18}(?![A-Za-z0-9])/g;
/** A CVV/CVC named in text and its 3 or 4 digits: `cvv 910`, `CVC2: 1234`, `"cvv":"910"`, `security code=910`. */
const CVV_LIKE = /\b(cvv2?|cvc2?|cvn|csc|cid|security[ _-]?code)([^A-Za-z0-9]{0,6})\d{3,4}(?!\d)/gi;
/** Secret query parameters of a URL (our callback URLs carry `token=`). */
const SECRET_QUERY_VALUE = /([?&](?:token|apikey|api_key|secret)=)[^&#\s"'<>]*/gi;

const knownSecretValues = new Set<string>();
let scrubPattern: RegExp | undefined;

/** Registers a value that must never be printed (API secret, provider token, link apikey, ...). */
export function registerSecretValue(value: string | undefined | null): void {
  if (!value || value.length < 6 || knownSecretValues.has(value)) return;
  knownSecretValues.add(value);
  // Bounded: tokens rotate hourly; keep the newest few hundred values.
  if (knownSecretValues.size > 500) knownSecretValues.delete(knownSecretValues.values().next().value as string);
  scrubPattern = new RegExp(
    [...knownSecretValues]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join('|'),
    'g',
  );
}

/** Registers every secret of the configuration (idempotent): whatever path one takes, it is scrubbed. */
export function registerConfiguredSecrets(config: AppConfig): void {
  for (const secret of [
    config.provider.secretKey,
    config.provider.apiKey,
    config.provider.spAuthToken,
    config.callbackSigningSecret,
    config.auth.jwtSecret,
    config.dataEncryptionKey.toString('base64'),
  ]) {
    registerSecretValue(secret);
  }
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
 * The one scrubber of free text: configured secrets and provider tokens, secret query values
 * (callback tokens), card numbers (last four kept) and CVV/CVC values.
 */
export function scrubText(text: string): string {
  return maskCardNumbersIn(scrubSecretValues(text).replace(SECRET_QUERY_VALUE, `$1${REDACTED}`).replace(CVV_LIKE, `$1$2${REDACTED}`));
}

/**
 * What the provider said, made safe once, where it enters the service: every string (and key) of
 * the parsed body goes through `scrubText`, except the values the service exists to receive and
 * keeps to itself (the issued `token`, a link's `apikey`, a new card's `card_number` and `cvv`:
 * the key net of `redact` hides those wherever they are stored or logged), and identifiers and
 * amounts (`*_id`, `reference`, `amount`, `*balance`: a long numeric id or balance is not a card
 * number), which only lose secret values.
 */
export function scrubProviderBody<T>(value: T, key = '', depth = 0): T {
  if (depth > 32) return REDACTED as T;
  if (typeof value === 'string') {
    const lower = key.toLowerCase();
    if (SECRET_KEYS.has(lower) || CARD_NUMBER_KEYS.has(lower)) return value;
    return (IDENTIFIER_OR_AMOUNT_KEY.test(key) ? scrubSecretValues(value) : scrubText(value)) as T;
  }
  if (Array.isArray(value)) return (value as unknown[]).map((v) => scrubProviderBody(v, key, depth + 1)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[scrubText(k)] = scrubProviderBody(v, k, depth + 1);
    return out as T;
  }
  return value;
}
const IDENTIFIER_OR_AMOUNT_KEY = /(^|_)(id|reference|amount|balance)$|[a-z](Id|Reference|Amount|Balance)$/;

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
        const lower = key.toLowerCase();
        if (SECRET_KEYS.has(lower)) return [key, v === undefined || v === null ? v : REDACTED];
        if (CARD_NUMBER_KEYS.has(lower)) return [key, typeof v === 'string' ? maskCardNumber(v) : REDACTED];
        return [key, redact(v, depth + 1)];
      }),
    ) as T;
  }
  return value;
}

/** Removes secret query parameters (callback tokens) from a URL, or from a text holding URLs, before it is logged or stored. */
export function redactUrl(url: string): string {
  return scrubSecretValues(url.replace(SECRET_QUERY_VALUE, `$1${REDACTED}`));
}

/**
 * Text PostgreSQL can store: `text` and `jsonb` refuse NUL, and `jsonb` refuses a lone UTF-16
 * surrogate. Each becomes U+FFFD, so a record is kept (altered visibly) instead of lost.
 */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD').replace(UNPAIRED_SURROGATES, '\uFFFD');
}

/** Deep copy of a JSON value with every string and key made storable (see `storableText`). */
export function storableJson<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return (value as unknown[]).map((v) => storableJson(v, depth + 1)) as T;
  if (value && typeof value === 'object' && depth < 64) {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [storableText(k), storableJson(v, depth + 1)]),
    ) as T;
  }
  return value;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
