/**
 * Every refusal is a ProblemError: the service's problem+json (RFC 9457) with its stable `code`, or,
 * when no problem came back, one built the same way (`network_error`, `unexpected_response`), so that
 * a frontend has one thing to catch and one `detail` to show.
 */
import type { components } from './openapi/merchant-api.js';

export type Problem = components['schemas']['ProblemDetailsDto'];
export type FieldError = components['schemas']['FieldErrorDto'];

export class ProblemError extends Error implements Problem {
  override readonly name = 'ProblemError';
  readonly type: string;
  readonly title: string;
  /** The HTTP status; 0 when no answer came (`network_error`). */
  readonly status: number;
  readonly detail: string;
  /** Stable machine-readable code: `validation_failed`, `not_found`, `idempotency_in_progress`, ... */
  readonly code: string;
  readonly requestId: string;
  readonly errors?: FieldError[];
  readonly outcomeKnown?: boolean;
  readonly retryAfterSeconds?: number;
  /** The answer's Retry-After, in seconds, when it had one. */
  readonly retryAfter?: number;

  constructor(problem: Problem, options: { retryAfter?: number; cause?: unknown } = {}) {
    super(`${problem.code}: ${problem.detail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.type = problem.type;
    this.title = problem.title;
    this.status = problem.status;
    this.detail = problem.detail;
    this.code = problem.code;
    this.requestId = problem.requestId;
    if (problem.errors) this.errors = problem.errors;
    if (problem.outcomeKnown !== undefined) this.outcomeKnown = problem.outcomeKnown;
    if (problem.retryAfterSeconds !== undefined) this.retryAfterSeconds = problem.retryAfterSeconds;
    if (options.retryAfter !== undefined) this.retryAfter = options.retryAfter;
  }
}

/** Retry-After in seconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

function isProblem(body: unknown): body is Problem {
  return (
    typeof body === 'object' && body !== null && typeof (body as Problem).code === 'string' && typeof (body as Problem).status === 'number'
  );
}

/** The ProblemError of a refused answer whose body was already read (`body`: parsed JSON, text, or nothing). */
export function problemOf(response: Response, body: unknown): ProblemError {
  const retryAfter = retryAfterSeconds(response.headers);
  if (isProblem(body)) return new ProblemError(body, { retryAfter });
  const text = typeof body === 'string' ? body.slice(0, 200) : '';
  return new ProblemError(
    {
      type: 'about:blank',
      title: response.statusText || `HTTP ${response.status}`,
      status: response.status,
      detail: `The service answered ${response.status} without a problem+json body${text ? `: ${text}` : ''}.`,
      code: 'unexpected_response',
      requestId: response.headers.get('x-request-id') ?? '',
    },
    { retryAfter },
  );
}

/** The ProblemError of a refused answer, reading its body. */
export async function readProblem(response: Response): Promise<ProblemError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return problemOf(response, body);
}

/** No answer at all: the service could not be reached, or the connection broke. */
export function networkProblem(cause: unknown): ProblemError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new ProblemError(
    {
      type: 'about:blank',
      title: 'The service could not be reached',
      status: 0,
      detail: `No answer from the service (${reason}). Check the connection and try again.`,
      code: 'network_error',
      requestId: '',
    },
    { cause },
  );
}
