/**
 * Secrets never reach a log line or a stored record. Two nets:
 * - by key: any field whose name says it holds a secret is replaced (card numbers keep their last four);
 * - by value: the exact values of configured secrets and of every provider token this process has
 *   seen are scrubbed from the final text, wherever they hide (a URL, an error message, a header).
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

const knownSecretValues = new Set<string>();
let scrubPattern: RegExp | undefined;

/** Registers a value that must never be printed (API secret, provider token, link apikey, ...). */
export function registerSecretValue(value: string | undefined | null): void {
  if (!value || value.length < 6 || knownSecretValues.has(value)) return;
  knownSecretValues.add(value);
  // Bounded: tokens rotate hourly; keep the newest few hundred values.
  if (knownSecretValues.size > 500) knownSecretValues.delete(knownSecretValues.values().next().value as string);
  scrubPattern = new RegExp([...knownSecretValues].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|'), 'g');
}

export function scrubSecretValues(text: string): string {
  return scrubPattern ? text.replace(scrubPattern, REDACTED) : text;
}

export function maskCardNumber(value: string): string {
  const digits = value.replace(/\D/g, '');
  return digits.length >= 4 ? `**** **** **** ${digits.slice(-4)}` : REDACTED;
}

/** Deep copy with secret fields replaced; safe to log or store. */
export function redact<T>(value: T, depth = 0): T {
  if (depth > 12) return REDACTED as T;
  if (typeof value === 'string') return scrubSecretValues(value) as T;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1)) as T;
  if (value && typeof value === 'object' && !(value instanceof Date) && !Buffer.isBuffer(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const lower = key.toLowerCase();
      if (SECRET_KEYS.has(lower)) out[key] = v === undefined || v === null ? v : REDACTED;
      else if (CARD_NUMBER_KEYS.has(lower)) out[key] = typeof v === 'string' ? maskCardNumber(v) : REDACTED;
      else out[key] = redact(v, depth + 1);
    }
    return out as T;
  }
  return value;
}

/** Removes secret query parameters (callback tokens) from a URL before it is logged. */
export function redactUrl(url: string): string {
  return scrubSecretValues(url.replace(/([?&](?:token|apikey|api_key|secret)=)[^&#]*/gi, `$1${REDACTED}`));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
