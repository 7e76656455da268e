import type { Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { endSpan, startServerSpan, tracingEnabled, withActiveSpan } from './tracing';

/**
 * When tracing is on, every request is a server span (`GET /v1/orders/:id`: the method and the
 * route pattern, never the URL, whose path or query may hold a callback token), continuing the
 * caller's `traceparent`, active through the request's hooks, handler and the calls they make;
 * it ends with the answer's status (5xx an error) or when the client goes away. While tracing is
 * off no hook is added.
 */
export function traceHttpRequests(fastify: FastifyInstance): void {
  if (!tracingEnabled()) return;
  const spans = new WeakMap<FastifyRequest, Span>();
  fastify.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const span = startServerSpan(`${request.method} ${route}`, request.headers, {
      'http.request.method': request.method,
      'http.route': route,
      'url.scheme': request.protocol,
    });
    if (!span) return done();
    spans.set(request, span);
    withActiveSpan(span, done);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    spans.delete(request);
    if (span)
      endSpan(span, { 'http.response.status_code': reply.statusCode }, reply.statusCode >= 500 ? String(reply.statusCode) : undefined);
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    const span = spans.get(request);
    spans.delete(request);
    if (span) endSpan(span, {}, 'aborted');
    done();
  });
}
