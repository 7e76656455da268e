import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Inject } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../database/database-unavailable';
import { APP_LOGGER } from '../logging/logging.module';
import { DomainError, type FieldError } from '../common/domain-error';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
const PROBLEM_TYPE_BASE = 'https://docs.payments-bff.local/problems/';

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  instance?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

const CODE_BY_STATUS: Record<number, [string, string]> = {
  400: ['bad_request', 'The request is invalid'],
  401: ['unauthenticated', 'Authentication required'],
  403: ['forbidden', 'Not allowed'],
  404: ['not_found', 'Not found'],
  405: ['method_not_allowed', 'Method not allowed'],
  406: ['not_acceptable', 'Not acceptable'],
  409: ['conflict', 'Conflict'],
  413: ['payload_too_large', 'Payload too large'],
  415: ['unsupported_media_type', 'Unsupported media type'],
  422: ['unprocessable_entity', 'Unprocessable entity'],
  429: ['too_many_requests', 'Too many requests'],
};

/**
 * The one place where errors become HTTP answers: RFC 9457 problem+json for everything, the
 * service's own DomainErrors, Nest's HttpExceptions, Fastify's parser errors and the unexpected.
 * The unexpected is logged with its stack and answered with a generic 500: no stack, no secret.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  constructor(@Inject(APP_LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost) {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const { problem, headers } = this.toProblem(exception, String(request.id ?? ''));
    if (problem.status === 503) this.logger.warn({ err: exception, code: problem.code }, 'request failed: a dependency is unavailable');
    else if (problem.status >= 500) this.logger.error({ err: exception, code: problem.code }, 'request failed');
    if (reply.sent) return;
    for (const [name, value] of Object.entries(headers)) reply.header(name, value);
    reply.status(problem.status).header('content-type', PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
  }

  toProblem(exception: unknown, requestId: string): { problem: ProblemDetails; headers: Record<string, string> } {
    // A lost database is an outage to wait out (503 with Retry-After), not a fault of the service.
    if (!(exception instanceof DomainError) && isDatabaseUnavailable(exception)) exception = new DatabaseUnavailableError(exception);
    if (exception instanceof DomainError) {
      return {
        problem: {
          type: PROBLEM_TYPE_BASE + exception.code,
          title: exception.title,
          status: exception.status,
          detail: exception.detail,
          code: exception.code,
          requestId,
          ...(exception.errors ? { errors: exception.errors } : {}),
          ...exceptionExtensions(exception),
        },
        headers: exception.headers,
      };
    }
    const status = httpStatusOf(exception);
    if (status !== undefined && status < 500) {
      const [code, title] = CODE_BY_STATUS[status] ?? ['request_error', 'Request error'];
      return {
        problem: { type: PROBLEM_TYPE_BASE + code, title, status, detail: clientMessage(exception, title), code, requestId },
        headers: {},
      };
    }
    return {
      problem: {
        type: PROBLEM_TYPE_BASE + 'internal_error',
        title: 'Internal error',
        status: HttpStatus.INTERNAL_SERVER_ERROR,
        detail: 'The service failed to process the request. Quote the requestId when reporting it.',
        code: 'internal_error',
        requestId,
      },
      headers: {},
    };
  }
}

/** Public extension members a DomainError chooses to expose (e.g. retryAfterSeconds). */
function exceptionExtensions(error: DomainError): Record<string, unknown> {
  const extensions = (error as { problemExtensions?: Record<string, unknown> }).problemExtensions;
  return extensions ?? {};
}

function httpStatusOf(exception: unknown): number | undefined {
  if (exception instanceof HttpException) return exception.getStatus();
  // Fastify's own errors (body parsing, payload size, content type) carry a statusCode.
  const statusCode = (exception as { statusCode?: unknown })?.statusCode;
  return typeof statusCode === 'number' && statusCode >= 400 && statusCode < 600 ? statusCode : undefined;
}

function clientMessage(exception: unknown, fallback: string): string {
  if (exception instanceof HttpException) {
    const response = exception.getResponse();
    if (typeof response === 'string') return response;
    const message = (response as { message?: unknown }).message;
    if (typeof message === 'string') return message;
    if (Array.isArray(message)) return message.join('; ');
    return fallback;
  }
  const message = (exception as { message?: unknown })?.message;
  return typeof message === 'string' && message.length < 300 ? message : fallback;
}
