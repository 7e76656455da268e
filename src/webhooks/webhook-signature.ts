import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The prefix of a webhook endpoint's secret (Standard Webhooks): `whsec_` + base64 of the key bytes. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new endpoint secret: `whsec_` followed by the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The HMAC key of a secret: the base64-decoded part after `whsec_`. */
export function webhookSigningKey(secret: string): Buffer {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_');
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  if (key.length === 0) throw new Error('a webhook secret carries a key');
  return key;
}

/**
 * The `webhook-signature` header of one attempt (Standard Webhooks): `v1,` + base64 HMAC-SHA256 of
 * `{id}.{timestamp}.{body}` under each secret's key, separated by spaces (during a rotation, the
 * new secret's first, then the old one's). `timestamp` is the attempt's Unix time in seconds.
 */
export function webhookSignatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  if (secrets.length === 0) throw new Error('a delivery is signed with at least one secret');
  const signed = `${id}.${timestamp}.${body}`;
  return secrets.map((secret) => `v1,${createHmac('sha256', webhookSigningKey(secret)).update(signed).digest('base64')}`).join(' ');
}

/** Whether `header` holds a valid v1 signature of the message under `secret` (for the listener and tests). */
export function webhookSignatureMatches(secret: string, header: string, id: string, timestamp: number, body: string): boolean {
  const expected = Buffer.from(webhookSignatureHeader([secret], id, timestamp, body));
  return header.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
