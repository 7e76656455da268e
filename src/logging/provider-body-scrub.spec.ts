import { type AnswerShape, scrubProviderBody, scrubText, sentTextContext } from './provider-body-scrub';
import { registerSecretValue, REDACTED, scrubSecretValues } from './redaction';

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
