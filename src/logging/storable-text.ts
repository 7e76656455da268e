import { UNPAIRED_SURROGATES } from '../common/unicode';

/**
 * Text PostgreSQL can store: `text` and `jsonb` refuse NUL, and `jsonb` refuses a lone UTF-16
 * surrogate. Each becomes U+FFFD, so a record is kept (altered visibly) instead of lost.
 */
export function storableText(text: string): string {
  return MAY_NOT_BE_STORABLE.test(text) ? text.replaceAll('\u0000', '\uFFFD').replace(UNPAIRED_SURROGATES, '\uFFFD') : text;
}

/** A NUL or any surrogate: only such a text needs storableText's two replacements. */
// eslint-disable-next-line no-control-regex -- NUL is what this looks for
const MAY_NOT_BE_STORABLE = /[\u0000\uD800-\uDFFF]/;

/**
 * A JSON value with every string and key made storable (see `storableText`): the value itself when
 * none needed it (nearly always), else a copy, changed where needed. Never changes `value`.
 */
export function storableJson<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) {
    const items = (value as unknown[]).map((v) => storableJson(v, depth + 1));
    return (items.some((item, i) => item !== value[i]) ? items : value) as T;
  }
  if (value && typeof value === 'object' && depth < 64) {
    const entries = Object.entries(value as Record<string, unknown>);
    const storable = entries.map(([k, v]) => [storableText(k), storableJson(v, depth + 1)] as const);
    return (storable.some(([k, v], i) => k !== entries[i][0] || v !== entries[i][1]) ? Object.fromEntries(storable) : value) as T;
  }
  return value;
}
