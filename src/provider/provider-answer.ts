import { scrubProviderBody, scrubText, sentTextContext } from '../logging/provider-body-scrub';
import { storableJson, storableText } from '../logging/storable-text';
import { answerShapeOf } from './provider-answer-shapes';
import type { ProviderRequest } from './provider-request';

/** What came back on the wire, before interpretation. */
export interface RawProviderAnswer {
  status: number;
  body: unknown;
  /** True when the body was not JSON (kept as text in `body`). */
  nonJson: boolean;
  retryAfter?: string;
}

const NON_JSON_KEPT_CHARS = 8192;

/** A header's text (the first of repeated ones). */
export function headerText(header: unknown): string | undefined {
  const value: unknown = Array.isArray(header) ? header[0] : header;
  return typeof value === 'string' ? value : undefined;
}

/** Parses and scrubs the provider's answer: nothing unscrubbed leaves this function. */
export function parseAnswer(request: ProviderRequest, status: number, text: string | undefined, retryAfter?: string): RawProviderAnswer {
  const raw = text ?? '';
  if (raw.trim() === '') return { status, body: null, nonJson: true, retryAfter };
  // What the answer may repeat of the request: the values we sent, the identifiers of the path.
  const sent = sentTextContext({
    path: request.path.split('/').map(decodePathSegment),
    query: request.query,
    headers: request.headers,
    body: request.body,
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // Only its beginning is ever kept (in the call log): scrubbed whole up to there, before any cut.
    const scrubbed = scrubText(raw.slice(0, NON_JSON_KEPT_CHARS), { ...sent, secretRuns: new Set(), secretTexts: [] });
    return { status, body: storableText(scrubbed), nonJson: true, retryAfter };
  }
  return { status, body: storableJson(scrubProviderBody(parsed, answerShapeOf(request.endpoint), sent)), nonJson: false, retryAfter };
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
