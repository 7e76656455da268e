/**
 * Key names of card secrets, credentials and tokens, matched on the name lower-cased, without
 * accents and separators (`card_cvv`, `securityCode`, `x-api-key`, `Authorization`, `cvc2`...):
 * a pattern, not a list of exact names, because the provider may name a field its own way.
 */
const SECRET_KEY_PART =
  /cvv|cvc|secret|passw|passcode|motdepasse|token|jeton|apikey|securitycode|codesecurite|codedesecurite|cryptogram|privatekey|accesskey|auth|cookie|credential|idnumber|signature|session|bearer/;
/** Short names that only mean a secret as a whole word of the key (`pin`, not `shipping`). */
const SECRET_KEY_WORDS = new Set(['pin', 'otp', 'cvn', 'csc', 'pwd', 'mdp']);
const CARD_NUMBER_KEY_PART = /cardnumber|cardno|numerocarte|numerodecarte/;

/** The words of a key name: `securityCode` and `security-code` are `security`, `code`. */
function keyWords(key: string): string[] {
  return key
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** True for a key whose value is a card secret, a credential or a token (card numbers included). */
export function isSecretKeyName(key: string): boolean {
  return classifiedKey(secretKeyNames, key, (name) => {
    const words = keyWords(name);
    const compact = words.join('');
    return SECRET_KEY_PART.test(compact) || words.some((w) => SECRET_KEY_WORDS.has(w)) || isCardNumberKeyName(name);
  });
}

/**
 * True for a header whose value is a credential: a secret-looking name, or one holding the word
 * `key` (`X-Key`, `Key-Id`), which in a header names a credential, while in a body it is as often data.
 */
export function isCredentialHeaderName(name: string): boolean {
  return isSecretKeyName(name) || keyWords(name).includes('key');
}

/** True for a key whose value is a card number (`card_number`, `cardNumber`, `pan`). */
export function isCardNumberKeyName(key: string): boolean {
  return classifiedKey(cardNumberKeyNames, key, (name) => {
    const words = keyWords(name);
    return CARD_NUMBER_KEY_PART.test(words.join('')) || words.includes('pan');
  });
}

/**
 * What was decided of a key name, kept: every log line, stored body and provider answer asks about
 * the same few dozen keys, and deciding one takes a Unicode normalisation and four patterns. Bounded,
 * so that hostile bodies full of new keys cannot grow it; past the bound a key is decided each time.
 */
const KEY_DECISIONS_KEPT = 4_096;
const KEY_DECIDED_MAX_LENGTH = 128;
const secretKeyNames = new Map<string, boolean>();
const cardNumberKeyNames = new Map<string, boolean>();

function classifiedKey(decided: Map<string, boolean>, key: string, decide: (key: string) => boolean): boolean {
  const known = decided.get(key);
  if (known !== undefined) return known;
  const decision = decide(key);
  if (decided.size < KEY_DECISIONS_KEPT && key.length <= KEY_DECIDED_MAX_LENGTH) decided.set(key, decision);
  return decision;
}
