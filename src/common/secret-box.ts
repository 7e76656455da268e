import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** Written before key ids: `v1.<iv>.<tag>.<ciphertext>`, sealed by a key it does not name. */
const UNNAMED_KEY_VERSION = 'v1';
/** `v2.<keyId>.<iv>.<tag>.<ciphertext>`: names the key that sealed it. */
const VERSION = 'v2';
/** HMAC label of key ids: a key id is derived from its key one way, and says nothing else about it. */
const KEY_ID_LABEL = 'payments-bff secret-box key id v1';

/**
 * The id a sealed value names its key by: the first 48 bits of HMAC-SHA256(key, label), in
 * base64url (8 characters). Enough to tell a handful of keys apart; a collision would only make
 * the wrong key fail its authentication tag, never open a value.
 */
export function secretKeyId(key: Buffer): string {
  return createHmac('sha256', key).update(KEY_ID_LABEL).digest().subarray(0, 6).toString('base64url');
}

interface Key {
  id: string;
  bytes: Buffer;
}

/**
 * AES-256-GCM for secrets kept at rest (provider token, wallet-link apikeys, identity numbers,
 * webhook secrets). The stored text is `v2.<keyId>.<iv>.<tag>.<ciphertext>` in base64url; `purpose`
 * is bound as associated data so a value encrypted for one column cannot be replayed into another.
 * New values are sealed with the current key; the previous keys (a rotation in progress) still open
 * what they sealed. A `v1` value, written before key ids, is opened by whichever key authenticates it.
 */
export class SecretBox {
  private readonly current: Key;
  /** Current first: a `v1` value is most likely the current key's. */
  private readonly keys: Key[];

  constructor(currentKey: Buffer, previousKeys: readonly Buffer[] = []) {
    for (const key of [currentKey, ...previousKeys]) if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.keys = [currentKey, ...previousKeys].map((bytes) => ({ id: secretKeyId(bytes), bytes }));
    this.current = this.keys[0];
  }

  /** The id of the key new values are sealed with. */
  get currentKeyId(): string {
    return this.current.id;
  }

  encrypt(plaintext: string, purpose: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.bytes, iv);
    cipher.setAAD(Buffer.from(purpose));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      VERSION,
      this.current.id,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      ciphertext.toString('base64url'),
    ].join('.');
  }

  decrypt(sealed: string, purpose: string): string {
    const parts = sealed.split('.');
    if (parts[0] === VERSION && parts.length === 5) {
      const [, keyId, iv, tag, ciphertext] = parts;
      const key = this.keys.find((candidate) => candidate.id === keyId);
      // The key id is not secret: it tells an operator which retired key is still needed.
      if (!key) throw new Error(`sealed with an unknown key (key id ${keyId})`);
      return open(key.bytes, iv, tag, ciphertext, purpose);
    }
    if (parts[0] === UNNAMED_KEY_VERSION && parts.length === 4) {
      const [, iv, tag, ciphertext] = parts;
      for (const key of this.keys) {
        try {
          return open(key.bytes, iv, tag, ciphertext, purpose);
        } catch {
          // Not this key (or tampered with): GCM's tag says so; try the next one.
        }
      }
      throw new Error('sealed with none of the configured keys (a v1 value)');
    }
    throw new Error('unrecognised sealed value');
  }

  /** Whether `sealed` is already sealed with the current key (a re-seal would change nothing but its IV). */
  isCurrent(sealed: string): boolean {
    return sealed.startsWith(`${VERSION}.${this.current.id}.`);
  }

  /** `sealed` sealed again with the current key, or undefined when it already is. Throws when no configured key opens it. */
  reseal(sealed: string, purpose: string): string | undefined {
    return this.isCurrent(sealed) ? undefined : this.encrypt(this.decrypt(sealed, purpose), purpose);
  }
}

function open(key: Buffer, iv: string, tag: string, ciphertext: string, purpose: string): string {
  // A full 16-byte tag only: a truncated one would be easier to forge.
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
  decipher.setAAD(Buffer.from(purpose));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}
