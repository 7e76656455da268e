import { createCipheriv, randomBytes } from 'node:crypto';
import { SecretBox, secretKeyId } from './secret-box';

/** What the service wrote before key ids: `v1.<iv>.<tag>.<ciphertext>`. */
function sealV1(key: Buffer, plaintext: string, purpose: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(purpose));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('round-trips and never stores the plaintext', () => {
    const sealed = box.encrypt('provider-token-123', 'provider-token');
    expect(sealed).not.toContain('provider-token-123');
    expect(box.decrypt(sealed, 'provider-token')).toBe('provider-token-123');
  });

  it('uses a fresh IV per value', () => {
    expect(box.encrypt('same', 'p')).not.toBe(box.encrypt('same', 'p'));
  });

  it('refuses a value sealed for another purpose or tampered with', () => {
    const sealed = box.encrypt('secret', 'wallet-link-apikey');
    expect(() => box.decrypt(sealed, 'provider-token')).toThrow();
    const parts = sealed.split('.');
    parts[4] = Buffer.from('other').toString('base64url');
    expect(() => box.decrypt(parts.join('.'), 'wallet-link-apikey')).toThrow();
    const truncatedTag = sealed.split('.');
    truncatedTag[3] = truncatedTag[3].slice(0, 6);
    expect(() => box.decrypt(truncatedTag.join('.'), 'wallet-link-apikey')).toThrow();
  });

  it('refuses a key of the wrong size, current or previous', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow('32-byte');
    expect(() => new SecretBox(randomBytes(32), [randomBytes(31)])).toThrow('32-byte');
  });

  describe('key rotation', () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const before = new SecretBox(oldKey);
    const during = new SecretBox(newKey, [oldKey]);
    const after = new SecretBox(newKey);

    it('names the sealing key by an id derived from it, never the key', () => {
      const sealed = before.encrypt('apikey', 'p');
      const [version, keyId] = sealed.split('.');
      expect(version).toBe('v2');
      expect(keyId).toBe(secretKeyId(oldKey));
      expect(keyId).toMatch(/^[A-Za-z0-9_-]{8}$/);
      expect(sealed).not.toContain(oldKey.toString('base64url'));
      expect(secretKeyId(newKey)).not.toBe(secretKeyId(oldKey));
      expect(during.currentKeyId).toBe(secretKeyId(newKey));
    });

    it('seals with the current key and opens what a previous key sealed', () => {
      const old = before.encrypt('sealed-before', 'p');
      expect(during.decrypt(old, 'p')).toBe('sealed-before');
      const fresh = during.encrypt('sealed-during', 'p');
      expect(fresh.split('.')[1]).toBe(secretKeyId(newKey));
      expect(after.decrypt(fresh, 'p')).toBe('sealed-during');
    });

    it('refuses, naming only the key id, a value whose key is no longer configured', () => {
      const old = before.encrypt('sealed-before', 'p');
      expect(() => after.decrypt(old, 'p')).toThrow(`sealed with an unknown key (key id ${secretKeyId(oldKey)})`);
    });

    it('opens a v1 value (no key id) with whichever configured key sealed it', () => {
      expect(during.decrypt(sealV1(oldKey, 'legacy-old', 'p'), 'p')).toBe('legacy-old');
      expect(during.decrypt(sealV1(newKey, 'legacy-new', 'p'), 'p')).toBe('legacy-new');
      expect(() => after.decrypt(sealV1(oldKey, 'legacy-old', 'p'), 'p')).toThrow('none of the configured keys');
      expect(() => during.decrypt(sealV1(oldKey, 'legacy-old', 'p'), 'other purpose')).toThrow();
    });

    it('re-seals what is not under the current key, and leaves the rest alone', () => {
      const old = before.encrypt('old', 'p');
      const legacy = sealV1(newKey, 'legacy', 'p');
      const current = during.encrypt('current', 'p');
      expect(during.isCurrent(old)).toBe(false);
      expect(during.isCurrent(legacy)).toBe(false);
      expect(during.isCurrent(current)).toBe(true);
      expect(during.reseal(current, 'p')).toBeUndefined();
      for (const [sealed, clear] of [
        [old, 'old'],
        [legacy, 'legacy'],
      ]) {
        const resealed = during.reseal(sealed, 'p')!;
        expect(during.isCurrent(resealed)).toBe(true);
        expect(after.decrypt(resealed, 'p')).toBe(clear);
      }
    });
  });
});
