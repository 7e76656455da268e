import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

/** Why a token was refused: `expired` is told apart so that the client knows to get a fresh one. */
export type Hs256Refusal = 'invalid' | 'expired';

export class Hs256Error extends Error {
  constructor(
    readonly refusal: Hs256Refusal,
    message: string,
  ) {
    super(message);
    this.name = 'Hs256Error';
  }
}

export interface Hs256Options {
  /** Seconds of clock skew allowed on `exp` and `nbf`. */
  clockToleranceSeconds: number;
  /** Claims that must be present (whatever their value; their types are checked below when they have rules). */
  requiredClaims: readonly string[];
  /** Now, in milliseconds since the epoch (tests pin it). */
  now?: number;
}

const SEGMENT = /^[A-Za-z0-9_-]*$/;
const SHA256_BYTES = 32;

/**
 * Verifies a compact HS256 JWT synchronously with node:crypto and answers its claims. jose (which
 * the service uses for the identity provider's RS256/ES256 keys) verifies an HMAC through
 * WebCrypto: an asynchronous job and a promise per token, about 40 µs of CPU against 5 µs here, on
 * every authenticated request. The rules are jose's `jwtVerify` with `algorithms: ['HS256']`,
 * checked in the same order (src/auth/hs256.spec.ts compares the two on generated tokens), except
 * that a header with `crit` is refused outright (jose would accept only `crit: ["b64"]`, which no
 * identity provider issues) and segments must be plain base64url. `keys` is one key, or the
 * current key and the previous ones of a rotation: a token signed by any of them is accepted.
 */
export function verifyHs256(token: string, keys: KeyObject | readonly KeyObject[], options: Hs256Options): Record<string, unknown> {
  const segments = token.split('.');
  if (segments.length !== 3) throw invalid('not a compact JWS');
  const [encodedHeader, encodedPayload, encodedSignature] = segments;
  for (const segment of segments) if (!SEGMENT.test(segment) || segment.length % 4 === 1) throw invalid('not base64url');

  const header = jsonObject(encodedHeader);
  if (!header) throw invalid('the header is not a JSON object');
  if (header.crit !== undefined) throw invalid('critical header extensions are not supported');
  if (header.alg !== 'HS256') throw invalid('"alg" is not HS256');

  const signature = Buffer.from(encodedSignature, 'base64url');
  // The length is public (it is the algorithm's); only equal lengths reach the constant-time compare.
  if (signature.length !== SHA256_BYTES) throw invalid('signature verification failed');
  const signed = `${encodedHeader}.${encodedPayload}`;
  // Several keys while one is being rotated out: the current one first, so most tokens cost one HMAC.
  const signedBy = (key: KeyObject) => timingSafeEqual(signature, createHmac('sha256', key).update(signed).digest());
  if (!(Array.isArray(keys) ? keys : [keys as KeyObject]).some(signedBy)) throw invalid('signature verification failed');

  const payload = jsonObject(encodedPayload);
  if (!payload) throw invalid('the payload is not a JSON object');
  for (const claim of options.requiredClaims) if (!(claim in payload)) throw invalid(`missing required "${claim}" claim`);
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  const tolerance = options.clockToleranceSeconds;
  if (payload.iat !== undefined && typeof payload.iat !== 'number') throw invalid('"iat" claim must be a number');
  if (payload.nbf !== undefined) {
    if (typeof payload.nbf !== 'number') throw invalid('"nbf" claim must be a number');
    if (payload.nbf > now + tolerance) throw invalid('"nbf" claim timestamp check failed');
  }
  if (payload.exp !== undefined) {
    if (typeof payload.exp !== 'number') throw invalid('"exp" claim must be a number');
    if (payload.exp <= now - tolerance) throw new Hs256Error('expired', '"exp" claim timestamp check failed');
  }
  return payload;
}

function invalid(message: string): Hs256Error {
  return new Hs256Error('invalid', message);
}

/** The segment's JSON when it is an object (not an array, not null); undefined otherwise. */
function jsonObject(segment: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
