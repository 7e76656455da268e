import { DomainError } from '../common/domain-error';
import type { ProblemDetails } from '../http/problem-details.filter';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

export class IdempotencyKeyRequiredError extends DomainError {
  readonly status = 400;
  readonly code = 'idempotency_key_required';
  readonly title = 'An Idempotency-Key header is required';
  constructor() {
    super(
      `This operation moves money or creates a provider object: send an ${IDEMPOTENCY_KEY_HEADER} header (1 to 255 printable ASCII characters, unique per operation).`,
    );
  }
}

/** Same key, same user, same route, but another body: most likely a client bug reusing keys. */
export class IdempotencyKeyReusedError extends DomainError {
  readonly status = 422;
  readonly code = 'idempotency_key_reused';
  readonly title = 'The Idempotency-Key was already used with another request';
  constructor() {
    super(`This ${IDEMPOTENCY_KEY_HEADER} was already used with a different request body; use a new key for a new operation.`);
  }
}

export class IdempotencyInProgressError extends DomainError {
  readonly status = 409;
  readonly code = 'idempotency_in_progress';
  readonly title = 'A request with this Idempotency-Key is still being processed';
  override readonly headers = { 'retry-after': '1' };
  constructor() {
    super(`The first request with this ${IDEMPOTENCY_KEY_HEADER} is still running; retry shortly to get its answer.`);
  }

  get problemExtensions(): Record<string, unknown> {
    return { retryAfterSeconds: 1 };
  }
}

// Members the filter builds itself from the error; everything else of a stored problem is an extension.
const BUILT_MEMBERS = new Set(['title', 'status', 'detail', 'code', 'requestId', 'errors']);

/**
 * The stored error answer of a first request, thrown again so that the global filter renders it
 * as problem+json: same status, code, title, detail, errors and extension members (type included);
 * only the requestId is the retry's own.
 */
export class ReplayedProblemError extends DomainError {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  override readonly headers = { [IDEMPOTENT_REPLAYED_HEADER.toLowerCase()]: 'true' };
  private readonly extensions: Record<string, unknown>;

  constructor(problem: ProblemDetails) {
    super(problem.detail, problem.errors ? { errors: problem.errors } : undefined);
    this.status = problem.status;
    this.code = problem.code;
    this.title = problem.title;
    this.extensions = Object.fromEntries(Object.entries(problem).filter(([name]) => !BUILT_MEMBERS.has(name)));
  }

  get problemExtensions(): Record<string, unknown> {
    return this.extensions;
  }
}
