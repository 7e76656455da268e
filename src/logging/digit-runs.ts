import { REDACTED } from './redaction';

/**
 * What a provider text may keep, for one exchange: the digits we sent or hold, and the digits the
 * answer itself delivered as secrets (which no exception keeps).
 */
export interface ProviderTextContext {
  /** Digit runs of numeric values we sent (amount, phone, service code): kept where they stand alone. */
  readonly allowedRuns: ReadonlySet<string>;
  /** Texts we sent or hold that hold digits (references, identifiers, emails): an occurrence keeps its digits. */
  readonly allowedPhrases: readonly string[];
  /** Digits the answer delivers as secrets (a new card's number and CVV): masked even when we sent them. */
  readonly secretRuns: ReadonlySet<string>;
  /** Other texts the answer delivers as secrets, replaced wherever they appear in it. */
  readonly secretTexts: readonly string[];
}

export const NO_TEXT_CONTEXT: ProviderTextContext = { allowedRuns: new Set(), allowedPhrases: [], secretRuns: new Set(), secretTexts: [] };

/** Shortest digit run masked: a CVV has three digits. */
export const MASKED_RUN_DIGITS = 3;
/** A group of runs this long (`41 11 11 ...`) is a card number's length, whatever its runs. */
const CARD_LIKE_GROUP_DIGITS = 13;
/** Separator characters between runs of one group: `4111 1111`, `4111.1111`, `4111\u00A01111`. */
const MAX_SEPARATOR_CHARS = 3;
const NON_ASCII_DIGIT = /^\p{Nd}$/u;
const GROUP_SEPARATOR = /^[\p{Zs}\p{Pd}\p{Cf}\t.,_/'\u2019\u00B7\u2022]$/u;

/** Length in UTF-16 units of the code point at `i` when it is a decimal digit (any script), else 0. */
function digitAt(text: string, i: number): number {
  const code = text.charCodeAt(i);
  if (code >= 48 && code <= 57) return 1;
  if (code < 128) return 0;
  const point = String.fromCodePoint(text.codePointAt(i)!);
  return NON_ASCII_DIGIT.test(point) ? point.length : 0;
}

function separatorAt(text: string, i: number): number {
  const point = String.fromCodePoint(text.codePointAt(i)!);
  return GROUP_SEPARATOR.test(point) ? point.length : 0;
}

/** Positions covered by an occurrence of an allowed phrase. */
function protectedPositions(text: string, phrases: readonly string[]): Uint8Array | undefined {
  let marks: Uint8Array | undefined;
  for (const phrase of phrases) {
    if (phrase.length < MASKED_RUN_DIGITS) continue;
    for (let at = text.indexOf(phrase); at >= 0; at = text.indexOf(phrase, at + phrase.length)) {
      marks ??= new Uint8Array(text.length);
      marks.fill(1, at, at + phrase.length);
    }
  }
  return marks;
}

interface DigitRun {
  start: number;
  end: number;
  digits: number;
}

/**
 * The one rule over the provider's free text: every run of three or more digits is masked, unless
 * it is a value we sent (`allowedRuns`) or lies in an occurrence of a text we sent or hold
 * (`allowedPhrases`); a run the answer delivered as a secret is masked whatever its length. Runs
 * joined by a few separators (a grouped card number) form a group: a group as long as a card
 * number is masked whole, and masked runs next to each other become one `[REDACTED]`. One pass.
 */
export function maskDigitRuns(text: string, context: ProviderTextContext = NO_TEXT_CONTEXT): string {
  const marks = protectedPositions(text, context.allowedPhrases);
  let out = '';
  let copiedTo = 0;
  let i = 0;
  while (i < text.length) {
    if (digitAt(text, i) === 0) {
      i++;
      continue;
    }
    const runs: DigitRun[] = [];
    let j = i;
    for (;;) {
      const run: DigitRun = { start: j, end: j, digits: 0 };
      for (let width = digitAt(text, j); width > 0; width = j < text.length ? digitAt(text, j) : 0) {
        j += width;
        run.digits++;
      }
      run.end = j;
      runs.push(run);
      let k = j;
      let separators = 0;
      for (let width = k < text.length ? separatorAt(text, k) : 0; width > 0 && separators < MAX_SEPARATOR_CHARS;) {
        k += width;
        separators++;
        width = k < text.length ? separatorAt(text, k) : 0;
      }
      if (separators === 0 || k >= text.length || digitAt(text, k) === 0) break;
      j = k;
    }
    const masked = runs.map((run) => {
      const digits = text.slice(run.start, run.end);
      if (context.secretRuns.has(digits)) return true;
      if (marks && marks[run.start] === 1 && marks[run.end - 1] === 1) return false;
      return run.digits >= MASKED_RUN_DIGITS && !context.allowedRuns.has(digits);
    });
    if (runs.length > 1) {
      const whole = runs.map((run) => text.slice(run.start, run.end)).join('');
      const total = runs.reduce((sum, run) => sum + run.digits, 0);
      const protectedGroup = marks !== undefined && runs.every((run) => marks[run.start] === 1 && marks[run.end - 1] === 1);
      if (context.secretRuns.has(whole) || (total >= CARD_LIKE_GROUP_DIGITS && !protectedGroup && !context.allowedRuns.has(whole)))
        masked.fill(true);
    }
    for (let r = 0; r < runs.length; r++) {
      if (!masked[r]) continue;
      // Masked runs next to each other (and their separators) become one mark.
      let last = r;
      while (last + 1 < runs.length && masked[last + 1]) last++;
      out += text.slice(copiedTo, runs[r].start) + REDACTED;
      copiedTo = runs[last].end;
      r = last;
    }
    i = runs[runs.length - 1].end;
  }
  return copiedTo === 0 ? text : out + text.slice(copiedTo);
}
