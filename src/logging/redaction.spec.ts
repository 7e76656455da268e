import {
  maskCardNumber,
  redact,
  redactUrl,
  registerSecretValue,
  REDACTED,
  scrubProviderBody,
  scrubSecretValues,
  scrubText,
  storableJson,
  storableText,
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

describe('scrubText: the one scrubber of free text', () => {
  it.each([
    ['card 4242424242424242 cvv 910 declined', `card **** **** **** 4242 cvv ${REDACTED} declined`],
    ['CVC2: 1234 for 4242 4242 4242 4242', `CVC2: ${REDACTED} for **** **** **** 4242`],
    ['{"cvv":"910","pan":"4111-1111-1111-1111"}', `{"cvv":"${REDACTED}","pan":"**** **** **** 1111"}`],
    ['security code=321', `security code=${REDACTED}`],
    ['retry at https://x.test/cb?token=abc&x=1', `retry at https://x.test/cb?token=${REDACTED}&x=1`],
  ])('%p', (text, scrubbed) => expect(scrubText(text)).toBe(scrubbed));

  it('scrubs registered secrets too, and leaves ordinary text alone', () => {
    registerSecretValue('prov-secret-echoed-77');
    expect(scrubText('invalid private_secretkey prov-secret-echoed-77')).toBe(`invalid private_secretkey ${REDACTED}`);
    for (const text of ['Insufficient balance', 'amount 100000000 XAF', 'User CU12345678901234 not found', 'cvv is required'])
      expect(scrubText(text)).toBe(text);
  });
});

describe('scrubProviderBody: the provider boundary', () => {
  it('scrubs every text, keeps what the service exists to receive, and identifiers', () => {
    registerSecretValue('prov-apikey-echoed-88');
    const kept = {
      token: 'tok-issued',
      data: { apikey: 'lk_new', matricule: 'MAT1', expireAt: '2030-01-01T00:00:00Z' },
      card_number: '4242424242424242',
      cvv: '910',
      transaction_id: '4242424242424242',
      new_balance: '4242424242424242',
    };
    const echoes = {
      message: 'card 4242424242424242 cvv 910 declined for prov-apikey-echoed-88',
      errors: [{ detail: 'cvv: 123' }],
      'prov-apikey-echoed-88': 1,
    };
    expect(scrubProviderBody({ ...kept, ...echoes })).toEqual({
      ...kept,
      message: `card **** **** **** 4242 cvv ${REDACTED} declined for ${REDACTED}`,
      errors: [{ detail: `cvv: ${REDACTED}` }],
      [REDACTED]: 1,
    });
  });
});

describe('storable text', () => {
  it('replaces NUL and lone surrogates with U+FFFD, keeps pairs', () => {
    expect(storableText('a\u0000b')).toBe('a\uFFFDb');
    expect(storableText('x\ud800y\udc00z\ud83d\ude00')).toBe('x\uFFFDy\uFFFDz\ud83d\ude00');
    expect(storableJson({ 'k\u0000': ['v\u0000', 1, null] })).toEqual({ 'k\uFFFD': ['v\uFFFD', 1, null] });
  });
});
