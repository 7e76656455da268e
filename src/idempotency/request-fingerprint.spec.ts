import { createHash, createHmac, randomBytes } from 'node:crypto';
import { canonicalJson, fingerprintKey, fingerprintMatches, legacyRequestHash, requestFingerprint } from './request-fingerprint';
import { fingerprint, KEY, requestHash, topUp } from './request-fingerprint.spec-support';

describe('canonicalJson / requestFingerprint', () => {
  it('ignores member order at every depth', () => {
    const a = { amount: '12.50', customer: { name: 'Ada', address: { city: 'Lyon', zip: '69001' } }, items: [{ sku: 'x', qty: 1 }] };
    const b = { items: [{ qty: 1, sku: 'x' }], customer: { address: { zip: '69001', city: 'Lyon' }, name: 'Ada' }, amount: '12.50' };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(requestHash(fingerprint(a))).toBe(requestHash(fingerprint(b)));
  });

  it('keeps array order significant', () => {
    expect(requestHash(fingerprint({ items: [1, 2] }))).not.toBe(requestHash(fingerprint({ items: [2, 1] })));
  });

  it('tells values of different types apart', () => {
    expect(requestHash(fingerprint({ amount: 1500 }))).not.toBe(requestHash(fingerprint({ amount: '1500' })));
    expect(requestHash(fingerprint({ note: null }))).not.toBe(requestHash(fingerprint({})));
  });

  it('drops undefined members as JSON does, and reads a missing body as null', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson([undefined])).toBe('[null]');
  });

  it('escapes member names and strings', () => {
    expect(canonicalJson({ 'a"b': 'c\nd' })).toBe('{"a\\"b":"c\\nd"}');
  });

  it('hashes the whole request: scope, method, route and path parameters as well as the body', () => {
    const base = topUp('card-a', { amount: '100' });
    expect(requestHash(base)).toMatch(/^hmac1:[0-9a-f]{64}$/);
    expect(requestHash(base)).toBe(requestHash(topUp('card-a', { amount: '100' })));
    expect(requestHash(topUp('card-b', { amount: '100' }))).not.toBe(requestHash(base));
    expect(requestHash({ ...base, scope: 'cards.withdraw' })).not.toBe(requestHash(base));
    expect(requestHash({ ...base, route: '/v1/cards/:id/withdraw' })).not.toBe(requestHash(base));
    expect(requestHash({ ...base, method: 'PUT' })).not.toBe(requestHash(base));
    expect(requestHash({ ...base, method: 'post' })).toBe(requestHash(base));
  });

  it('cannot be fooled by moving text between the parts', () => {
    expect(requestHash({ ...fingerprint({}), route: '/a', params: { id: 'b' } })).not.toBe(
      requestHash({ ...fingerprint({}), route: '/a"b', params: {} }),
    );
  });
});

describe('keyed fingerprints', () => {
  const card = fingerprint({ idNumber: 'CM1234567', otp: '123456' }, 'card-users.create');
  const canonical = canonicalJson(['card-users.create', 'POST', '/probe', {}, { idNumber: 'CM1234567', otp: '123456' }]);

  it('cannot be recomputed from the request alone: it is an HMAC under the server key, not a hash of the request', () => {
    const stored = requestFingerprint(KEY, card);
    expect(stored).not.toContain(createHash('sha256').update(canonical).digest('hex'));
    expect(stored).toBe(`hmac1:${createHmac('sha256', KEY).update(canonical).digest('hex')}`);
    expect(requestFingerprint(randomBytes(32), card)).not.toBe(stored);
  });

  it('derives its key from DATA_ENCRYPTION_KEY under its own label: deterministic, and not the encryption key', () => {
    const dataKey = randomBytes(32);
    expect(fingerprintKey(dataKey)).toEqual(fingerprintKey(Buffer.from(dataKey)));
    expect(fingerprintKey(dataKey)).toHaveLength(32);
    expect(fingerprintKey(dataKey).equals(dataKey)).toBe(false);
    expect(fingerprintKey(randomBytes(32)).equals(fingerprintKey(dataKey))).toBe(false);
  });

  it('still recognises a legacy plain hash stored before the upgrade, for the same request only', () => {
    const legacy = legacyRequestHash(card);
    expect(legacy).toBe(createHash('sha256').update(canonical).digest('hex'));
    expect(fingerprintMatches(legacy, KEY, card)).toBe(true);
    expect(fingerprintMatches(legacy, KEY, { ...card, body: { idNumber: 'CM1234568', otp: '123456' } })).toBe(false);
    expect(fingerprintMatches(requestFingerprint(KEY, card), KEY, card)).toBe(true);
    expect(fingerprintMatches(requestFingerprint(randomBytes(32), card), KEY, card)).toBe(false);
    // A keyed value is never compared as a plain hash, nor the reverse.
    expect(fingerprintMatches(`hmac1:${legacy}`, KEY, card)).toBe(false);
    expect(fingerprintMatches(legacy.toUpperCase(), KEY, card)).toBe(false);
  });
});
