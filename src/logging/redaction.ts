import type { AppConfig } from '../config/app-config';
import { isCardNumberKeyName, isSecretKeyName } from './secret-key-names';

/**
 * Secrets never reach a log line or a stored record. Three nets:
 * - by key: any field whose name looks like it holds a card secret, a credential or a token is
 *   replaced (card numbers keep their last four), at any depth (`redact`; the names are judged by
 *   `isSecretKeyName`, secret-key-names.ts);
 * - by value: the exact values of configured secrets and of every provider token, link apikey and
 *   card number this process has seen are scrubbed from the final text, wherever they hide (here);
 * - in what the provider wrote (`scrubText`, `scrubProviderBody`: provider-body-scrub.ts): every
 *   run of three or more digits is masked (`maskDigitRuns`, digit-runs.ts), unless it is a value we
 *   sent in that request or an identifier we hold.
 * What PostgreSQL can store of a text is storable-text.ts.
 */
export const REDACTED = '[REDACTED]';

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

/** Replaces the values of secret query parameters (callback tokens) in a text. */
export function redactSecretQueryValues(text: string): string {
  return text.replace(SECRET_QUERY_VALUE, `$1${REDACTED}`);
}

/** Removes secret query parameters (callback tokens) from a URL, or from a text holding URLs, before it is logged or stored. */
export function redactUrl(url: string): string {
  // Most texts hold no `=`, hence no secret query value: they skip that pattern.
  return scrubSecretValues(url.includes('=') ? url.replace(SECRET_QUERY_VALUE, `$1${REDACTED}`) : url);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
