import { createHash, createHmac, hkdfSync } from 'node:crypto';

/** What makes two requests "the same request" for a key: the whole request, not only its body. */
export interface RequestFingerprint {
  /** The operation (the route's `@Idempotent` scope). */
  scope: string;
  method: string;
  /** The route pattern, e.g. `/v1/cards/:id/topup`. */
  route: string;
  /** The path parameters: the same body on another card is another request. */
  params: unknown;
  body: unknown;
}

/**
 * JSON with object keys sorted at every depth, so that two bodies a client would call "the same"
 * (same members, any order) serialise identically. Array order stays: it is meaningful.
 */
export function canonicalJson(value: unknown): string {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return canonicalJson((value as { toJSON(): unknown }).toJSON());
  }
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .filter((name) => (value as Record<string, unknown>)[name] !== undefined)
      .map((name) => `${JSON.stringify(name)}:${canonicalJson((value as Record<string, unknown>)[name])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The request part of a stored fingerprint: scope, method, route, path parameters and body. A key
 * reused on another resource (another card, another card user) or another route fingerprints
 * differently, so it is refused as reused instead of replaying the first request's answer.
 */
function canonicalRequest(request: RequestFingerprint): string {
  return canonicalJson([request.scope, request.method.toUpperCase(), request.route, request.params ?? {}, request.body ?? null]);
}

/** Marks a stored fingerprint as keyed; a stored value without it is a legacy unkeyed hash. */
export const KEYED_FINGERPRINT_PREFIX = 'hmac1:';
/** HKDF `info` of the fingerprint key: the encryption key itself never signs anything. */
const FINGERPRINT_KEY_PURPOSE = 'payments-bff idempotency request fingerprint v1';

/**
 * The key of request fingerprints, derived from DATA_ENCRYPTION_KEY (shared by every instance,
 * already a secret operators manage) with HKDF under its own label, so a fingerprint says nothing
 * about the encryption key and no new setting is needed.
 */
export function fingerprintKey(dataEncryptionKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', dataEncryptionKey, Buffer.alloc(0), FINGERPRINT_KEY_PURPOSE, 32));
}

/**
 * What is stored of a request: an HMAC-SHA256 under the server's fingerprint key. A plain hash
 * sat beside the answer and gave low-entropy fields of the body (an identity document number, an
 * OTP) back to anyone who could read the table and try every value; without the key, nobody can.
 */
export function requestFingerprint(key: Buffer, request: RequestFingerprint): string {
  return KEYED_FINGERPRINT_PREFIX + createHmac('sha256', key).update(canonicalRequest(request)).digest('hex');
}

/**
 * The unkeyed SHA-256 that records stored before fingerprints were keyed hold. Compared with only
 * so that a retry of such a request still replays (never runs twice, never a 422) until the
 * record expires; none is written any more. Removable once no record from before the upgrade is
 * left (their TTL is 24 h).
 */
export function legacyRequestHash(request: RequestFingerprint): string {
  return createHash('sha256').update(canonicalRequest(request)).digest('hex');
}

const LEGACY_HASH = /^[0-9a-f]{64}$/;

/**
 * Whether a stored fingerprint (keyed, or a legacy plain hash) is that of `request`. `keys` are the
 * fingerprint keys of DATA_ENCRYPTION_KEY and of each of DATA_ENCRYPTION_PREVIOUS_KEYS: a retry of a
 * request fingerprinted before a rotation still replays rather than answering 422.
 */
export function fingerprintMatches(stored: string, keys: Buffer | readonly Buffer[], request: RequestFingerprint): boolean {
  if (stored.startsWith(KEYED_FINGERPRINT_PREFIX))
    return (Buffer.isBuffer(keys) ? [keys] : keys).some((key) => stored === requestFingerprint(key, request));
  return LEGACY_HASH.test(stored) && stored === legacyRequestHash(request);
}
