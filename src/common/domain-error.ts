/**
 * Base of every error the service raises on purpose. The global problem+json filter turns it into
 * an RFC 9457 answer: `code` is stable and machine-readable, `detail` is for humans and never
 * carries secrets, card data or stack traces.
 */
export interface FieldError {
  field: string;
  message: string;
}

export abstract class DomainError extends Error {
  abstract readonly status: number;
  abstract readonly code: string;
  abstract readonly title: string;
  readonly headers: Record<string, string> = {};
  readonly errors?: FieldError[];

  constructor(detail: string, options?: { cause?: unknown; errors?: FieldError[] }) {
    super(detail, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.errors = options?.errors;
  }

  get detail(): string {
    return this.message;
  }
}

export class ValidationFailedError extends DomainError {
  readonly status = 400;
  readonly code = 'validation_failed';
  readonly title = 'The request is invalid';
  constructor(errors: FieldError[], detail = 'One or more fields are invalid.') {
    super(detail, { errors });
  }
}

export class NotFoundError extends DomainError {
  readonly status = 404;
  readonly code = 'not_found';
  readonly title = 'Not found';
}

export class UnauthenticatedError extends DomainError {
  readonly status = 401;
  readonly code = 'unauthenticated';
  readonly title = 'Authentication required';
  override readonly headers = { 'www-authenticate': 'Bearer' };
}

export class ForbiddenError extends DomainError {
  readonly status = 403;
  readonly code = 'forbidden';
  readonly title = 'Not allowed';
}

export class ConflictError extends DomainError {
  readonly status = 409;
  readonly title = 'Conflict';
  constructor(
    readonly code: string,
    detail: string,
  ) {
    super(detail);
  }
}
