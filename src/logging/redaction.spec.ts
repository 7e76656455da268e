import { maskCardNumber, redact, redactUrl, registerSecretValue, REDACTED, scrubSecretValues } from './redaction';

describe('redaction', () => {
  it('replaces secret fields at any depth and masks card numbers', () => {
    const out = redact({
      public_apikey: 'k',
      private_secretkey: 's',
      nested: { Authorization: 'Bearer abc', 'x-sp-auth-token': 't', list: [{ cvv: '123', card_number: '4111111111111111' }] },
      data: { apikey: 'link-key', matricule: 'MAT1' },
      kyc: { id_number: 'CM-ID-778899', idNumber: 'CM-ID-778899' },
      amount: 12,
    });
    expect(out).toEqual({
      public_apikey: REDACTED,
      private_secretkey: REDACTED,
      nested: { Authorization: REDACTED, 'x-sp-auth-token': REDACTED, list: [{ cvv: REDACTED, card_number: '**** **** **** 1111' }] },
      data: { apikey: REDACTED, matricule: 'MAT1' },
      kyc: { id_number: REDACTED, idNumber: REDACTED },
      amount: 12,
    });
  });

  it('scrubs registered secret values wherever they appear', () => {
    registerSecretValue('tok_live_5d41402abc4b2a76');
    expect(scrubSecretValues('failed with tok_live_5d41402abc4b2a76 in header')).toBe(`failed with ${REDACTED} in header`);
    expect(redact({ message: 'Bearer tok_live_5d41402abc4b2a76' })).toEqual({ message: `Bearer ${REDACTED}` });
  });

  it('ignores values too short to be secrets (they would scrub ordinary text)', () => {
    registerSecretValue('abc');
    expect(scrubSecretValues('abc')).toBe('abc');
  });

  it('removes callback tokens from URLs', () => {
    expect(redactUrl('/v1/callbacks/payin/1/success?token=abcdef&x=1')).toBe(`/v1/callbacks/payin/1/success?token=${REDACTED}&x=1`);
  });

  it('masks only what looks like a card number', () => {
    expect(maskCardNumber('4111 1111 1111 1234')).toBe('**** **** **** 1234');
    expect(maskCardNumber('12')).toBe(REDACTED);
  });
});
