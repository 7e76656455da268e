import fc from 'fast-check';
import {
  maskCardNumber,
  redact,
  redactUrl,
  registerConfiguredSecrets,
  registerSecretValue,
  REDACTED,
  isSecretKeyName,
  scrubProviderBody,
  sentTextContext,
  type AnswerShape,
  scrubSecretValues,
  scrubText,
  storableJson,
  storableText,
} from './redaction';
import type { AppConfig } from '../config/app-config';
import { UNPAIRED_SURROGATES } from '../common/unicode';

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

describe('scrubText: the one scrubber of free text', () => {
  // Every run of three or more digits goes, card numbers whole (no last four: the provider's text is not trusted to be a card).
  it.each([
    ['card 4242424242424242 cvv 910 declined', `card ${REDACTED} cvv ${REDACTED} declined`],
    ['CVC2: 1234 for 4242 4242 4242 4242', `CVC2: ${REDACTED} for ${REDACTED}`],
    ['{"cvv":"910","pan":"4111-1111-1111-1111"}', `{"cvv":"${REDACTED}","pan":"${REDACTED}"}`],
    ['security code=321', `security code=${REDACTED}`],
    ['carte 4111.1111.1111.1111 cryptogramme 737 refusée', `carte ${REDACTED} cryptogramme ${REDACTED} refusée`],
    ['cvv is 737', `cvv is ${REDACTED}`],
    ['CVV code 737', `CVV code ${REDACTED}`],
    ['card_cvv=737', `card_cvv=${REDACTED}`],
    ['code de sécurité 737', `code de sécurité ${REDACTED}`],
    ['card 4111\u00A01111\u202F1111\u00A01111', `card ${REDACTED}`],
    ['card 41 11 11 11 11 11 11 11 declined', `card ${REDACTED} declined`],
    ['code ７３７ (fullwidth)', `code ${REDACTED} (fullwidth)`],
    ['User CU12345678901234 not found', `User CU${REDACTED} not found`],
    ['retry at https://x.test/cb?token=abc&x=1', `retry at https://x.test/cb?token=${REDACTED}&x=1`],
  ])('%p', (text, scrubbed) => expect(scrubText(text)).toBe(scrubbed));

  it('scrubs registered secrets too, and leaves text without long digit runs alone', () => {
    registerSecretValue('prov-secret-echoed-77');
    expect(scrubText('invalid private_secretkey prov-secret-echoed-77')).toBe(`invalid private_secretkey ${REDACTED}`);
    for (const text of ['Insufficient balance', 'cvv is required', 'retry in 30 s', 'HTTP/1.1 error 42'])
      expect(scrubText(text)).toBe(text);
  });

  it('keeps the digits of what the request sent: numeric values alone, other texts where they occur whole', () => {
    const sent = {
      ...sentTextContext({ amount: '1000.50', phone: '+237650000001', order_id: 'ord_8c1f200a', private_secretkey: 'sk_999888' }),
      secretRuns: new Set<string>(),
      secretTexts: [],
    };
    expect(scrubText('payer 237650000001 refused 1000.50 for ord_8c1f200a', sent)).toBe(
      'payer 237650000001 refused 1000.50 for ord_8c1f200a',
    );
    // A sent identifier protects its own occurrence, not its digits elsewhere; a sent secret protects nothing.
    expect(scrubText('ord_8c1f200b 200 sk_999888', sent)).toBe(`ord_8c1f${REDACTED}b ${REDACTED} sk_${REDACTED}`);
  });
});

describe('scrubProviderBody: the provider boundary', () => {
  const shape: AnswerShape = {
    fields: {
      token: 'secret',
      data: { fields: { apikey: 'secret', matricule: 'id', expireAt: 'text' } },
      card_number: 'secret',
      cvv: 'secret',
      transaction_id: 'id',
      new_balance: 'text',
    },
  };
  it('scrubs every text, keeps the typed fields of the shape', () => {
    registerSecretValue('prov-apikey-echoed-88');
    const kept = {
      token: 'tok-issued',
      data: { apikey: 'lk_new', matricule: 'MAT1', expireAt: '2030-01-01T00:00:00Z' },
      card_number: '4242424242424242',
      cvv: '910',
      // Long numbers in typed fields stay exact: they are read by schema, not from free text.
      transaction_id: '9876543210987654',
      new_balance: '100000000000.00',
    };
    const echoes = {
      message: 'card 4242424242424242 cvv 910 declined for prov-apikey-echoed-88',
      errors: [{ detail: 'cvv: 123', cvc2: 'x', nested: [{ Security_Code: 456, cardPin: '1234', numero: 4111111111111111 }] }],
      'prov-apikey-echoed-88': 1,
    };
    expect(scrubProviderBody({ ...kept, ...echoes }, shape)).toEqual({
      ...kept,
      message: `card ${REDACTED} cvv ${REDACTED} declined for ${REDACTED}`,
      errors: [{ detail: `cvv: ${REDACTED}`, cvc2: REDACTED, nested: [{ Security_Code: REDACTED, cardPin: REDACTED, numero: REDACTED }] }],
      // The key loses the secret it names, and a key that says `apikey` loses its value.
      [REDACTED]: REDACTED,
    });
  });

  it('registers the secrets an answer delivers before scrubbing it: a message repeating them is scrubbed', () => {
    const answer = {
      token: 'tok_echoed_in_answer_01',
      data: { apikey: 'lk_echoed_apikey_02' },
      message: 'token tok_echoed_in_answer_01 apikey lk_echoed_apikey_02',
    };
    expect(scrubProviderBody(answer, shape)).toEqual({ ...answer, message: `token ${REDACTED} apikey ${REDACTED}` });
    expect(scrubSecretValues('later: tok_echoed_in_answer_01')).toBe(`later: ${REDACTED}`);
  });

  it('masks a delivered CVV even where it equals a value we sent', () => {
    const sent = sentTextContext({ balance: '737' });
    const answer = { card_number: '4111111111111111', cvv: '737', message: 'card issued with cvv 737, balance 737' };
    expect(scrubProviderBody(answer, shape, sent).message).toBe(`card issued with cvv ${REDACTED}, balance ${REDACTED}`);
  });

  it('does not keep an unknown member whose shape is unexpected (an object where a text was typed)', () => {
    expect(scrubProviderBody({ transaction_id: { cvv: '123', note: 'pan 4111111111111111' } }, shape)).toEqual({
      transaction_id: { cvv: REDACTED, note: `pan ${REDACTED}` },
    });
  });
});

describe('secret key names: a pattern, not a list', () => {
  it.each([
    'cvv',
    'cvv2',
    'CVC2',
    'card_cvv',
    'security_code',
    'securityCode',
    'pin',
    'cardPin',
    'PIN_CODE',
    'secret',
    'client_secret',
    'password',
    'userPassword',
    'token',
    'accessToken',
    'x-sp-auth-token',
    'apikey',
    'api_key',
    'apiKey',
    'Authorization',
    'auth',
    'otp',
    'code_de_sécurité',
    'cryptogramme',
    'card_number',
    'cardNumber',
    'PAN',
  ])('%p is secret', (key) => expect(isSecretKeyName(key)).toBe(true));
  it.each([
    'amount',
    'matricule',
    'shipping',
    'spinner',
    'reference',
    'message',
    'status',
    'transaction_id',
    'panel',
    'footprint',
    'company',
  ])('%p is not', (key) => expect(isSecretKeyName(key)).toBe(false));
});

describe('storable text', () => {
  it('replaces NUL and lone surrogates with U+FFFD, keeps pairs', () => {
    expect(storableText('a\u0000b')).toBe('a\uFFFDb');
    expect(storableText('x\ud800y\udc00z\ud83d\ude00')).toBe('x\uFFFDy\uFFFDz\ud83d\ude00');
    expect(storableJson({ 'k\u0000': ['v\u0000', 1, null] })).toEqual({ 'k\uFFFD': ['v\uFFFD', 1, null] });
  });

  it('answers a value that needs nothing as it is, and changes only copies, never the value it was given', () => {
    const clean = { a: ['x', { b: 'y', c: 2 }], d: null, e: true };
    expect(storableJson(clean)).toBe(clean);
    const dirty = { a: ['x', { b: 'y\u0000', c: 2 }], d: 'clean' };
    const before = structuredClone(dirty);
    const storable = storableJson(dirty);
    expect(storable).toEqual({ a: ['x', { b: 'y\uFFFD', c: 2 }], d: 'clean' });
    expect(dirty).toEqual(before);
  });

  it('any JSON value: the same as a deep copy made storable string by string', () => {
    const copied = (value: unknown): unknown => {
      if (typeof value === 'string') return value.replaceAll('\u0000', '\uFFFD').replace(UNPAIRED_SURROGATES, '\uFFFD');
      if (Array.isArray(value)) return value.map(copied);
      if (value && typeof value === 'object')
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [copied(k) as string, copied(v)]));
      return value;
    };
    const text = fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('\u0000', '\ud800', '\udc00x', '\ud83d\ude00'));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null), tie('list'), tie('object')),
      list: fc.array(tie('value'), { maxLength: 4 }),
      object: fc.dictionary(text, tie('value'), { maxKeys: 4 }),
    })).value;
    fc.assert(fc.property(json, (value) => expect(storableJson(value)).toEqual(copied(value))));
  });
});
