import type { AppConfig } from '../config/app-config';
import {
  maskCardNumber,
  redact,
  redactUrl,
  registerConfiguredSecrets,
  registerSecretValue,
  REDACTED,
  scrubSecretValues,
} from './redaction';

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

  it('never forgets a configured secret, and forgets the value in use last', () => {
    registerConfiguredSecrets({
      provider: { secretKey: 'cfg-secret-kept-01', apiKey: 'cfg-apikey-kept-02', spAuthToken: 'cfg-sp-token-kept-03' },
      callbackSigningSecret: 'cfg-callback-kept-04',
      auth: { jwtSecret: 'cfg-jwt-kept-05' },
      dataEncryptionKey: Buffer.alloc(32, 7),
    } as unknown as AppConfig);
    registerSecretValue('tok-in-use-000001');
    registerSecretValue('tok-unused-000002');
    for (let i = 0; i < 600; i++) {
      registerSecretValue(`card-number-${i}-seen`);
      if (i % 100 === 0) registerSecretValue('tok-in-use-000001');
    }
    expect(scrubSecretValues('cfg-secret-kept-01 tok-in-use-000001 tok-unused-000002 card-number-599-seen')).toBe(
      `${REDACTED} ${REDACTED} tok-unused-000002 ${REDACTED}`,
    );
  });

  it('scrubs the previous keys of a rotation as it scrubs the current ones', () => {
    registerConfiguredSecrets({
      provider: { secretKey: 'cfg-secret-kept-01', apiKey: 'cfg-apikey-kept-02', spAuthToken: 'cfg-sp-token-kept-03' },
      callbackSigningSecret: 'cfg-callback-kept-04',
      callbackSigningPreviousSecrets: ['cfg-old-callback-06'],
      auth: { jwtSecret: 'cfg-jwt-kept-05', jwtPreviousSecrets: ['cfg-old-jwt-07'] },
      dataEncryptionKey: Buffer.alloc(32, 7),
      dataEncryptionPreviousKeys: [Buffer.alloc(32, 8)],
    } as unknown as AppConfig);
    const oldEncryptionKey = Buffer.alloc(32, 8).toString('base64');
    expect(scrubSecretValues(`cfg-old-callback-06 cfg-old-jwt-07 ${oldEncryptionKey}`)).toBe(`${REDACTED} ${REDACTED} ${REDACTED}`);
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

  it('blanks callback tokens in any stored string, URLs inside texts included', () => {
    const successUrl = 'https://shop.example/v1/callbacks/payin/42/success?token=AbC-123_xyz';
    expect(redact({ successUrl, note: `see ${successUrl} now` })).toEqual({
      successUrl: `https://shop.example/v1/callbacks/payin/42/success?token=${REDACTED}`,
      note: `see https://shop.example/v1/callbacks/payin/42/success?token=${REDACTED} now`,
    });
  });
});
