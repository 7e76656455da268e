import { MASKED_RUN_DIGITS, maskDigitRuns, NO_TEXT_CONTEXT, type ProviderTextContext } from './digit-runs';
import { REDACTED, redactSecretQueryValues, redactUrl, registerSecretValue, scrubSecretValues } from './redaction';
import { isSecretKeyName } from './secret-key-names';

/**
 * What the provider wrote in free text, made safe: registered secret values and the answer's own
 * secrets, secret query values (our callback URLs echoed back), then `maskDigitRuns`.
 */
export function scrubText(text: string, context: ProviderTextContext = NO_TEXT_CONTEXT): string {
  let scrubbed = scrubSecretValues(text);
  for (const secret of context.secretTexts) if (secret.length >= MASKED_RUN_DIGITS) scrubbed = scrubbed.replaceAll(secret, REDACTED);
  return maskDigitRuns(redactSecretQueryValues(scrubbed), context);
}

/** A numeric text: digits with the signs and separators of amounts and phone numbers. */
const NUMERIC_TEXT = /^[\s\d+().,-]+$/;
const DIGIT_RUN = /\d{3,}/g;

/**
 * What a request sends that its answer may repeat: digit runs of numeric values (amount, phone,
 * service code) and texts holding digits (references, identifiers in the path, emails), each
 * without the secrets it may carry. Values under a secret-looking key (credentials, OTP) are left
 * out: the provider repeating them is a leak.
 */
export function sentTextContext(sent: unknown): Pick<ProviderTextContext, 'allowedRuns' | 'allowedPhrases'> {
  const allowedRuns = new Set<string>();
  const allowedPhrases = new Set<string>();
  const visit = (value: unknown, depth: number) => {
    if (depth > 16 || value === null || value === undefined) return;
    if (typeof value === 'string' || typeof value === 'number') {
      const text = redactUrl(String(value));
      if (!/\d{3}/.test(text)) return;
      if (NUMERIC_TEXT.test(text)) for (const run of text.match(DIGIT_RUN) ?? []) allowedRuns.add(run);
      else allowedPhrases.add(text);
      return;
    }
    if (Array.isArray(value)) for (const item of value) visit(item, depth + 1);
    else if (typeof value === 'object')
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) if (!isSecretKeyName(key)) visit(item, depth + 1);
  };
  visit(sent, 0);
  return { allowedRuns, allowedPhrases: [...allowedPhrases] };
}

/**
 * The fields of an answer we understand (the typed fields a client reads), as a tree:
 * - `secret`: a value the service exists to receive (a token, a link's apikey, a card's number and
 *   CVV): kept exact, and registered with the scrubber before anything else of the answer is read;
 * - `id`: an identifier we will hold (kept, and its occurrences in the answer's texts keep their digits);
 * - `text`: a typed value (amount, balance, date, a name we stored): kept, without registered secret values;
 * - `code`: a status-like code: a number, or a string of at most three digits; else free text;
 * - `{ fields, items }`: an object's known members, an array's items.
 * Everything else the provider wrote is free text (`scrubText`), and every member whose name looks
 * like a secret (`isSecretKeyName`) is masked, at any depth.
 */
export type AnswerShape =
  'secret' | 'id' | 'text' | 'code' | { readonly fields?: Readonly<Record<string, AnswerShape>>; readonly items?: AnswerShape };

const MAX_DEPTH = 32;

/**
 * What the provider said, made safe once, where it enters the service. The secrets the answer
 * delivers (by `shape`) are registered first, so a message repeating them in the same answer is
 * scrubbed too; then the fields of `shape` are kept as typed, and every other text, key and number
 * passes `scrubText` with the digits `sent` in the request allowed (see `sentTextContext`).
 */
export function scrubProviderBody<T>(
  value: T,
  shape: AnswerShape = {},
  sent?: Pick<ProviderTextContext, 'allowedRuns' | 'allowedPhrases'>,
): T {
  const secrets: string[] = [];
  const ids: string[] = [];
  collectTyped(value, shape, secrets, ids, 0);
  for (const secret of secrets) registerSecretValue(secret);
  // Digit secrets are masked as runs (a CVV inside a longer number is not one); others as texts.
  const secretRuns = new Set<string>();
  const secretTexts: string[] = [];
  for (const secret of secrets) {
    const digits = secret.replace(/[\s.-]/g, '');
    if (/^\d+$/.test(digits)) secretRuns.add(digits);
    else secretTexts.push(secret);
  }
  const context: ProviderTextContext = {
    allowedRuns: sent?.allowedRuns ?? new Set(),
    allowedPhrases: [...(sent?.allowedPhrases ?? []), ...ids.filter((id) => /\d{3}/.test(id))],
    secretRuns,
    secretTexts,
  };
  return scrubShaped(value, shape, context, 0) as T;
}

function collectTyped(value: unknown, shape: AnswerShape, secrets: string[], ids: string[], depth: number): void {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object' || typeof shape !== 'object') {
    if (typeof value === 'string' && value !== '' && shape === 'secret') secrets.push(value);
    if (typeof value === 'string' && shape === 'id') ids.push(scrubSecretValues(value));
    return;
  }
  if (Array.isArray(value)) {
    if (shape.items) for (const item of value as unknown[]) collectTyped(item, shape.items, secrets, ids, depth + 1);
    return;
  }
  for (const [key, member] of Object.entries(value as Record<string, unknown>))
    if (shape.fields && Object.hasOwn(shape.fields, key)) collectTyped(member, shape.fields[key], secrets, ids, depth + 1);
}

function scrubShaped(value: unknown, shape: AnswerShape, context: ProviderTextContext, depth: number): unknown {
  if (depth > MAX_DEPTH) return REDACTED;
  if (value === null || typeof value === 'boolean') return value;
  switch (shape) {
    case 'secret':
      return typeof value === 'string' ? value : scrubFree(value, context, depth);
    case 'id':
    case 'text':
      if (typeof value === 'string') return scrubSecretValues(value);
      return typeof value === 'number' ? value : scrubFree(value, context, depth);
    case 'code':
      if (typeof value === 'number' || (typeof value === 'string' && /^\d{1,3}$/.test(value))) return value;
      return scrubFree(value, context, depth);
  }
  if (Array.isArray(value) && shape.items) return (value as unknown[]).map((item) => scrubShaped(item, shape.items!, context, depth + 1));
  if (typeof value === 'object' && !Array.isArray(value) && shape.fields) {
    const fields = shape.fields;
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, member]) =>
        Object.hasOwn(fields, key)
          ? [key, scrubShaped(member, fields[key], context, depth + 1)]
          : scrubFreeMember(key, member, context, depth),
      ),
    );
  }
  return scrubFree(value, context, depth);
}

/** A member the shape does not know: its name is free text, its value masked when the name looks secret. */
function scrubFreeMember(key: string, member: unknown, context: ProviderTextContext, depth: number): [string, unknown] {
  const value =
    isSecretKeyName(key) && member !== null && member !== undefined && typeof member !== 'boolean'
      ? REDACTED
      : scrubFree(member, context, depth + 1);
  return [scrubText(key, context), value];
}

function scrubFree(value: unknown, context: ProviderTextContext, depth: number): unknown {
  if (depth > MAX_DEPTH) return REDACTED;
  if (typeof value === 'string') return scrubText(value, context);
  if (typeof value === 'number') return scrubText(String(value), context) === String(value) ? value : REDACTED;
  if (Array.isArray(value)) return (value as unknown[]).map((item) => scrubFree(item, context, depth + 1));
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, member]) => scrubFreeMember(key, member, context, depth)),
    );
  return value;
}
