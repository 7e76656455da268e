import { ERASED_MARK } from './personal-data.register';

/** Shorter values are too common to look for inside a text: only a whole JSON string (or number) equal to one is replaced. */
const MIN_SEARCHED_LENGTH = 3;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The personal values of one customer, and their replacement wherever a text or a JSON body holds
 * them. A value is found case-insensitively as a whole token (not inside a longer run of letters
 * or digits, so a wallet number inside a reference is left alone), as written, URL-encoded (a
 * form body, a query) or JSON-escaped (a body kept as text); that occurrence becomes the mark.
 */
export class KnownValues {
  readonly values: readonly string[];
  private readonly distinctive: readonly string[];
  private readonly whole: ReadonlySet<string>;
  private readonly pattern?: RegExp;

  /** `distinctive` values name this customer alone and find its rows in unlinked tables; `context` values are only replaced. */
  constructor(distinctive: readonly string[], context: readonly string[] = []) {
    const unique = (values: readonly string[]) => {
      const found = new Map<string, string>();
      for (const raw of values) {
        const value = raw.trim();
        if (value !== '' && value !== ERASED_MARK) found.set(value.toLowerCase(), value);
      }
      return found;
    };
    this.distinctive = [...unique(distinctive).values()];
    const all = unique([...distinctive, ...context]);
    this.values = [...all.values()];
    this.whole = new Set(all.keys());
    const searched = this.values.filter((value) => value.length >= MIN_SEARCHED_LENGTH);
    const variants = new Set<string>();
    for (const value of searched) {
      variants.add(value);
      variants.add(encodeURIComponent(value));
      variants.add(encodeURIComponent(value).replace(/%20/g, '+'));
      variants.add(JSON.stringify(value).slice(1, -1));
    }
    // Longest first: an email is replaced whole before the name inside it is looked for.
    const alternatives = [...variants].sort((a, b) => b.length - a.length).map(escapeRegExp);
    if (alternatives.length) this.pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives.join('|')})(?![\\p{L}\\p{N}])`, 'giu');
  }

  get isEmpty(): boolean {
    return this.values.length === 0;
  }

  /**
   * What finds the customer's rows in a table not linked to it (the call log): the distinctive
   * values, lower-cased, as JSON text escapes them and as a URL encodes them.
   */
  get needles(): string[] {
    const lower = this.distinctive.filter((value) => value.length >= MIN_SEARCHED_LENGTH).map((value) => value.toLowerCase());
    return [...new Set(lower.flatMap((value) => [JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]))];
  }

  scrubText(text: string): string {
    if (this.whole.has(text.trim().toLowerCase())) return ERASED_MARK;
    return this.pattern ? text.replace(this.pattern, ERASED_MARK) : text;
  }

  /** `text` with the values replaced; null stays null. */
  scrubNullableText(text: string | null): string | null {
    return text === null ? null : this.scrubText(text);
  }

  /** A copy of `value` (parsed JSON) with every string, and every number written as a value, scrubbed; keys are kept. */
  scrubJson(value: unknown): unknown {
    if (typeof value === 'string') return this.scrubText(value);
    if (typeof value === 'number') return this.whole.has(String(value)) ? ERASED_MARK : value;
    if (Array.isArray(value)) return value.map((item) => this.scrubJson(item));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.scrubJson(item)]));
    }
    return value;
  }
}
