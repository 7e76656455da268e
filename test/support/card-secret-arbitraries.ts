import fc from 'fast-check';

/**
 * Card numbers and security codes as a provider might write them back: valid Luhn numbers of 13
 * to 19 digits in any grouping, codes of 3 or 4 digits in English or French phrasings, in a
 * message or under a JSON key at any depth. For the property tests of the provider boundary.
 */

export function luhnCheckDigit(payload: string): string {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    let digit = Number(payload[payload.length - 1 - i]);
    if (i % 2 === 0) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return String((10 - (sum % 10)) % 10);
}

export const cardDigits: fc.Arbitrary<string> = fc
  .integer({ min: 13, max: 19 })
  .chain((length) =>
    fc.tuple(
      fc.integer({ min: 1, max: 9 }),
      fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: length - 2, maxLength: length - 2 }),
    ),
  )
  .map(([first, rest]) => `${first}${rest}${luhnCheckDigit(`${first}${rest}`)}`);

/** Separators a number may be grouped with: space, dot, dash, NBSP, narrow NBSP, thin space. */
export const SEPARATORS = [' ', '.', '-', '\u00A0', '\u202F', '\u2009'] as const;

export type Grouping = 'none' | 'space' | 'dot' | 'dash' | 'nbsp' | 'narrow-nbsp' | 'mixed';

/** A card number written with a grouping: in fours, or in groups of any size with mixed separators. */
export const groupedCard: fc.Arbitrary<{ digits: string; written: string; grouping: Grouping }> = fc
  .tuple(
    cardDigits,
    fc.constantFrom<Grouping>('none', 'space', 'dot', 'dash', 'nbsp', 'narrow-nbsp', 'mixed'),
    fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 19, maxLength: 19 }),
    fc.array(fc.constantFrom(...SEPARATORS), { minLength: 19, maxLength: 19 }),
  )
  .map(([digits, grouping, sizes, mixed]) => {
    if (grouping === 'none') return { digits, written: digits, grouping };
    const fixed = { space: ' ', dot: '.', dash: '-', nbsp: '\u00A0', 'narrow-nbsp': '\u202F' }[
      grouping as Exclude<Grouping, 'none' | 'mixed'>
    ];
    const groups: string[] = [];
    for (let at = 0, g = 0; at < digits.length; g++) {
      const size = grouping === 'mixed' ? sizes[g] : 4;
      groups.push(digits.slice(at, at + size));
      at += size;
    }
    const written = groups.reduce((text, group, g) => (g === 0 ? group : `${text}${fixed ?? mixed[g]}${group}`), '');
    return { digits, written, grouping };
  });

export const securityCode: fc.Arbitrary<string> = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 3, maxLength: 4 });

/** Names of a security code in English and French. */
export const CODE_LABELS = [
  'cvv',
  'CVV',
  'cvc',
  'CVC',
  'cvv2',
  'CVV2',
  'cvc2',
  'CVC2',
  'card_cvv',
  'security code',
  'Security Code',
  'CVV code',
  'code CVV',
  'code de sécurité',
  'cryptogramme',
  'cryptogramme visuel',
  'card verification value',
] as const;
export const CODE_SEPARATORS = [' is ', '=', ':', ' ', ': ', ' = ', ' est ', ' : ', '\u00A0:\u00A0'] as const;

/** A message in English or French holding the card number and its code, in one of several phrasings. */
export const TEMPLATES = [
  (card: string, code: string) => `card ${card} ${code} declined`,
  (card: string, code: string) => `carte ${card} ${code} refusée`,
  (card: string, code: string) => `${code} invalid for card ${card}`,
  (card: string, code: string) => `Paiement refusé : ${code}, carte ${card}`,
  (card: string, code: string) => `Declined (${code}) card=${card}`,
  (card: string, code: string) => `la carte n°${card} a un ${code} erroné`,
] as const;

/** Keys a provider may put a code or a number under, at any depth. */
export const CODE_KEYS = [
  'cvv',
  'cvv2',
  'cvc2',
  'card_cvv',
  'security_code',
  'securityCode',
  'CVC',
  'cryptogramme',
  'code_securite',
  'pin',
] as const;
export const NUMBER_KEYS = ['card_number', 'cardNumber', 'pan', 'number', 'numero_carte', 'card', 'masked'] as const;

export interface CardEcho {
  card: { digits: string; written: string; grouping: Grouping };
  code: string;
  /** The phrase naming the code, as written in the message (`cvv is 737`). */
  codePhrase: string;
  message: string;
  /** Extra members of the answer holding the number and the code under some keys, at some depth. */
  extra: Record<string, unknown>;
}

const nest = (path: string[], leaf: Record<string, unknown>): Record<string, unknown> =>
  path.reduceRight<Record<string, unknown>>((inner, key) => (key === '[]' ? { list: [inner] } : { [key]: inner }), leaf);

export const cardEcho: fc.Arbitrary<CardEcho> = fc
  .record({
    card: groupedCard,
    code: securityCode,
    label: fc.constantFrom(...CODE_LABELS),
    separator: fc.constantFrom(...CODE_SEPARATORS),
    template: fc.integer({ min: 0, max: TEMPLATES.length - 1 }),
    codeKey: fc.constantFrom(...CODE_KEYS),
    numberKey: fc.constantFrom(...NUMBER_KEYS),
    path: fc.array(fc.constantFrom('details', 'errors', 'data', 'meta', 'cause', '[]'), { maxLength: 5 }),
    asNumber: fc.boolean(),
  })
  .map(({ card, code, label, separator, template, codeKey, numberKey, path, asNumber }) => {
    const codePhrase = `${label}${separator}${code}`;
    // A number loses leading zeros: only a code without one is sent as a JSON number.
    const codeValue = asNumber && !code.startsWith('0') ? Number(code) : code;
    const extra = nest(path, { [codeKey]: codeValue, [numberKey]: card.written, note: `${codePhrase} (${card.written})` });
    return { card, code, codePhrase, message: TEMPLATES[template](card.written, codePhrase), extra };
  });

/** Every decimal digit of a text, in order (what a grouped number leaves once its separators are gone). */
export function digitsOf(text: string): string {
  return text.replace(/\P{Nd}/gu, '');
}
