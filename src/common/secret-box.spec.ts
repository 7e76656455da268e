import { randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box';

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
    parts[3] = Buffer.from('other').toString('base64url');
    expect(() => box.decrypt(parts.join('.'), 'wallet-link-apikey')).toThrow();
  });

  it('refuses a key of the wrong size', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow('32-byte');
  });
});
