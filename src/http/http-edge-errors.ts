import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { DomainError } from '../common/domain-error';
import { PROBLEM_CONTENT_TYPE, ProblemDetailsFilter } from './problem-details.filter';

/**
 * Errors raised before a request reaches a route: by the router (a URL that does not decode, a
 * path parameter over the router's limit) or by node's HTTP parser (oversize headers, a request
 * that is not HTTP). They are answered as problem+json like every other error.
 */
export class BadUrlError extends DomainError {
  readonly status = 400;
  readonly code = 'bad_url';
  readonly title = 'The URL is invalid';
}

export class UriTooLongError extends DomainError {
  readonly status = 414;
  readonly code = 'uri_too_long';
  readonly title = 'A path parameter is too long';
}

export class HeadersTooLargeError extends DomainError {
  readonly status = 431;
  readonly code = 'headers_too_large';
  readonly title = 'The request headers are too large';
}

export class MalformedRequestError extends DomainError {
  readonly status = 400;
  readonly code = 'malformed_request';
  readonly title = 'The request is not valid HTTP';
}

export class RequestTimeoutError extends DomainError {
  readonly status = 408;
  readonly code = 'request_timeout';
  readonly title = 'The request took too long to arrive';
}

export class MissingHostError extends DomainError {
  readonly status = 400;
  readonly code = 'missing_host';
  readonly title = 'The request has no Host header';
}

/** RFC 9112, 3.2: more than one Host is answered 400; which one a proxy or a route would read is anyone's guess. */
export class DuplicateHostError extends DomainError {
  readonly status = 400;
  readonly code = 'duplicate_host_header';
  readonly title = 'The request has more than one Host header';
}

export class InvalidPreflightError extends DomainError {
  readonly status = 400;
  readonly code = 'invalid_preflight';
  readonly title = 'The CORS preflight request is incomplete';
}

/**
 * Fastify's `frameworkErrors`: router errors, answered before any hook or route runs (hence the
 * security headers given here). Also answers the HTTP layer's own refusals in `onRequest` hooks,
 * where an error passed on would reach Fastify's default error handler on the routes Nest does
 * not own (the CORS preflight route, unmatched URLs).
 */
export function routerErrorHandler(logger: Logger, requestIdHeader: string, securityHeaders: Readonly<Record<string, string>> = {}) {
  const problems = new ProblemDetailsFilter(logger);
  return (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply) => {
    const domainError =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new UriTooLongError('A path parameter is longer than the router accepts (100 characters).')
        : error.code === 'FST_ERR_BAD_URL'
          ? new BadUrlError('The URL path does not decode (invalid percent-encoding).')
          : error;
    const { problem, headers } = problems.toProblem(domainError, String(request.id));
    if (problem.status >= 500) logger.error({ err: error }, 'router failed');
    void reply
      .status(problem.status)
      .headers({ ...securityHeaders, ...headers, [requestIdHeader]: String(request.id), 'content-type': PROBLEM_CONTENT_TYPE })
      .send(JSON.stringify(problem));
  };
}

/**
 * The HTTP server's `clientError`: a request node could not parse (oversize headers, garbage,
 * a timeout). No route, no reply object: the answer is written on the socket, with the headers
 * every answer carries (`headers`: the security headers), and the socket is then closed.
 */
export function clientErrorHandler(logger: Logger, requestIdHeader: string, headers: Readonly<Record<string, string>> = {}) {
  const extraHeaders = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const problems = new ProblemDetailsFilter(logger);
  return (error: Error & { code?: string }, socket: Socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const domainError =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? new HeadersTooLargeError('The request headers exceed the server limit (16 KiB).')
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new RequestTimeoutError('The request was not received in time.')
          : new MalformedRequestError('The request could not be parsed as HTTP.');
    const requestId = randomUUID();
    const { problem } = problems.toProblem(domainError, requestId);
    const body = JSON.stringify(problem);
    logger.debug({ err: error, requestId, status: problem.status }, 'client error');
    // An answer already begun on this socket (a request timed out while its answer streamed) cannot take another.
    const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (!socket.writable || answering) return void socket.destroy();
    socket.end(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `${requestIdHeader}: ${requestId}\r\n${extraHeaders}Connection: close\r\n\r\n${body}`,
    );
  };
}
