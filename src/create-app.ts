import { randomUUID } from 'node:crypto';
import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { signInConnectSources } from './http/swagger-sign-in';
import { setUpSwagger } from './http/swagger-setup';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, preParsingAsyncHookHandler } from 'fastify';
import { pipeline, Transform, type Readable } from 'node:stream';
import type { Logger } from 'pino';
import { AppModule } from './app.module';
import { CALLBACK_BODY_KEPT_BYTES, CALLBACK_BODY_MAX_BYTES, CALLBACK_ROUTE_PREFIX, callbackUrlVerifier } from './callbacks/callback-route';
import { BODY_BOUNDS, bodyRefusal, checkedJsonText, formExcess, QueryTooComplexError } from './common/bounded-json';
import { HTTP_TIMEOUTS } from './common/connection-limits';
import { limitConnections } from './http/connection-limit';
import {
  clientErrorHandler,
  DuplicateHostError,
  InvalidPreflightError,
  MissingHostError,
  routerErrorHandler,
} from './http/http-edge-errors';
import { serviceSecurityHeaders } from './common/security-headers';
import { createValidationPipe } from './common/validation';
import type { AppConfig } from './config/app-config';
import { PinoNestLogger } from './logging/logger';
import { registerConfiguredSecrets } from './logging/redaction';
import { requestIdScope } from './logging/request-context';
import { traceHttpRequests } from './tracing/http-tracing';
import { MetricsService } from './metrics/metrics.service';
import { AUTH_ROUTE_CONFIG_KEY, authorizeRequestSoon } from './auth/auth.guard';
import type { Role } from './auth/auth.types';
import { JwtVerifier } from './auth/jwt-verifier.service';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const REQUEST_ID_HEADER = 'x-request-id';

/** Builds the HTTP application (not listening yet). Used by the service entry point and by tests. */
export async function createApp(
  config: AppConfig,
  logger: Logger,
  options: { extraImports?: DynamicModule['imports'] } = {},
): Promise<NestFastifyApplication> {
  // Whatever path a configured secret takes (an error echoed by the provider, a URL), logs and records scrub it.
  registerConfiguredSecrets(config);
  // helmet's headers, computed once; https upgrades only for an https service (see serviceSecurityHeaders).
  const SECURITY_HEADERS = serviceSecurityHeaders(config.publicBaseUrl, signInConnectSources(config));
  const adapter = new FastifyAdapter({
    // Reuse the caller's request id when it is a sane token; otherwise mint one.
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) => {
      const given = req.headers[REQUEST_ID_HEADER];
      return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    // Only the configured proxies may say who the client is (rate limits and logs use it). Fastify
    // accepts a hop count too, which its typings omit.
    trustProxy: config.trustProxy as boolean | string[],
    // Errors of the router and of node's HTTP parser are problem+json like all others.
    frameworkErrors: routerErrorHandler(logger, REQUEST_ID_HEADER, SECURITY_HEADERS),
    clientErrorHandler: clientErrorHandler(logger, REQUEST_ID_HEADER, SECURITY_HEADERS),
    // A client must send its request in time (see HTTP_TIMEOUTS); past it, 408 problem+json
    // (clientErrorHandler) and the socket is closed.
    requestTimeout: HTTP_TIMEOUTS.requestTimeoutMs,
    http: {
      headersTimeout: HTTP_TIMEOUTS.headersTimeoutMs,
      connectionsCheckingInterval: HTTP_TIMEOUTS.connectionsCheckingIntervalMs,
      // Node answers a request without Host with a bare 400 of its own; the hook below answers it as problem+json.
      requireHostHeader: false,
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, logger, options.extraImports), adapter, {
    logger: new PinoNestLogger(logger.child({ component: 'nest' })),
    bufferLogs: false,
    // Throw instead of exiting the process: a service embedded in tests or a runner must fail visibly.
    abortOnError: false,
    // Body parsing is ours (registerBodyParsers): callbacks need the raw body and any content type.
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  limitConnections(fastify.server, config, logger);
  registerBodyParsers(fastify);
  // First, so that every answer carries them, a refusal by a later hook too; then the rest of the
  // request runs in its request id's scope.
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.headers(SECURITY_HEADERS);
    reply.header(REQUEST_ID_HEADER, request.id);
    requestIdScope.run(request.id, done);
  });
  // With tracing on, a span per request from here on (continuing the caller's traceparent); no hook otherwise.
  traceHttpRequests(fastify);
  const refuse = routerErrorHandler(logger, REQUEST_ID_HEADER, SECURITY_HEADERS);
  const verifier = app.get(JwtVerifier);
  // The request's own checks, in this order, in one hook (each hook is a step of Fastify's chain on every request).
  fastify.addHook('onRequest', (request, reply, done) => {
    // A query string is an object too: bounded like a body, before any validation sees it. The
    // provider's callbacks are exempt (their query is evidence, stored, never validated).
    const queryAt = request.url.indexOf('?');
    const excess =
      queryAt === -1 || isCallbackRoute(request) ? undefined : formExcess(request.url.slice(queryAt + 1), BODY_BOUNDS, 'The query string');
    if (excess !== undefined) return done(new QueryTooComplexError(excess));
    // HTTP/1.1 requires Host (RFC 9112, 3.2); HTTP/1.0 may omit it.
    if (request.raw.httpVersion !== '1.0' && request.headers.host === undefined)
      return refuse(new MissingHostError('The request has no Host header.'), request, reply);
    // Node keeps the first Host of several (rawHeaders has them all: name, value, name, value...).
    if (headerLines(request.raw.rawHeaders, 'host') > 1)
      return refuse(new DuplicateHostError('The request has more than one Host header.'), request, reply);
    // @fastify/cors answers these with a text/plain 400 of its own.
    const preflight = request.method === 'OPTIONS' && config.corsOrigins.length > 0;
    if (preflight && (!request.headers.origin || !request.headers['access-control-request-method']))
      return refuse(
        new InvalidPreflightError('An OPTIONS request needs the Origin and Access-Control-Request-Method headers.'),
        request,
        reply,
      );
    // An @Auth route's token and roles are checked before the body is read: a client without them
    // is answered 401/403 at once, whatever body it sends or withholds. AuthGuard then uses this
    // caller. A token verified lately is checked without a promise (authorizeRequestSoon).
    const required = requiredRoles(request);
    if (!required) return done();
    let verifying: Promise<void> | undefined;
    try {
      verifying = authorizeRequestSoon(verifier, request, required);
    } catch (error) {
      return done(error as Error);
    }
    if (verifying) verifying.then(() => done(), done);
    else done();
  });
  // server.close() closes the keep-alive connections idle when it starts; one whose request was
  // still in flight stayed open after its answer until Fastify's keepAliveTimeout (72 s), and the
  // close waited for it, past any orchestrator's grace period. While closing, answers say
  // `Connection: close`, and each finished one closes the connections it left idle.
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  const metrics = app.get(MetricsService);
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions?.url ?? 'unmatched';
    metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    // The route pattern, never the URL: its path or query may hold a callback token, in spellings no redaction foresees.
    logger.info(
      {
        requestId: request.id,
        method: request.method,
        route,
        status: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime),
      },
      'http request',
    );
    // While closing (see above): the connection this answer leaves idle.
    if (closing) setImmediate(() => fastify.server.closeIdleConnections());
    done();
  });

  await registerHttpProtections(app, config);
  app.useGlobalPipes(createValidationPipe());
  // No enableShutdownHooks(): it re-raises SIGTERM/SIGINT after closing (exit 143/130). src/main.ts owns the signals.
  setUpSwagger(app, config);
  await app.init();
  return app;
}

/** Routes anyone may call without a token: limited per client IP. */
const PUBLIC_ROUTE_PREFIXES = [CALLBACK_ROUTE_PREFIX, '/health', '/metrics', '/docs'];
/**
 * Calls per minute to one signed callback URL (one order, one outcome). The provider retries a
 * few times at most; the bound only matters if a token leaked.
 */
export const SIGNED_CALLBACK_LIMIT_PER_MINUTE = 60;
const SIGNED_CALLBACK_BUCKET = 'signed-callback:';

type RoutedRequest = { routeOptions: { url?: string } };

/** How many of node's raw header lines (name, value, name, value...) are `lowerCaseName`'s. */
function headerLines(rawHeaders: readonly string[], lowerCaseName: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length === lowerCaseName.length && name.toLowerCase() === lowerCaseName) count++;
  }
  return count;
}

/** Decided by the route the router matched, never by the raw URL: `/%6detrics` is `/metrics`. */
function routeOf(request: RoutedRequest): string | undefined {
  return request.routeOptions.url;
}

function isCallbackRoute(request: RoutedRequest): boolean {
  return routeOf(request)?.startsWith(CALLBACK_ROUTE_PREFIX) === true;
}

/** The roles an `@Auth` route requires (none: any caller with a valid token); undefined on any other route, an unmatched URL included. */
function requiredRoles(request: { routeOptions: { config?: unknown } }): readonly Role[] | undefined {
  const roles = (request.routeOptions.config as Record<string, unknown> | undefined)?.[AUTH_ROUTE_CONFIG_KEY];
  return Array.isArray(roles) ? (roles as Role[]) : undefined;
}

/**
 * CORS for the configured origins only, and a per-IP rate limit on the public routes.
 * Authenticated routes are bounded by their callers' tokens and by the provider budget. A callback
 * whose token verifies is counted in a bucket of its own URL, so that no anonymous traffic (from
 * the provider's IP or any other) can make the provider's notification wait.
 */
async function registerHttpProtections(app: NestFastifyApplication, config: AppConfig) {
  await app.register(cors, {
    origin: config.corsOrigins.length ? config.corsOrigins : false,
    credentials: false,
    // What a page reads of an answer: retries, replays and its share of the provider budget.
    exposedHeaders: ['retry-after', 'idempotent-replayed', 'ratelimit', 'ratelimit-policy', REQUEST_ID_HEADER],
    // last-event-id: a page that resumes an order's live status after a drop (fetch, docs/frontends.md).
    allowedHeaders: ['authorization', 'content-type', 'idempotency-key', 'last-event-id', REQUEST_ID_HEADER],
    maxAge: 600,
  });
  const verifyCallbackUrl = callbackUrlVerifier(app);
  // Only the public routes carry the limiter's hook: an authenticated request never runs it (not even to be let through).
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      if (!PUBLIC_ROUTE_PREFIXES.some((prefix) => route.url.startsWith(prefix))) route.config = { ...route.config, rateLimit: false };
    });
  await app.register(rateLimit, {
    global: true,
    max: (_request, key) => (key.startsWith(SIGNED_CALLBACK_BUCKET) ? SIGNED_CALLBACK_LIMIT_PER_MINUTE : config.publicRateLimitPerMinute),
    timeWindow: 60_000,
    keyGenerator: (request) => {
      if (!isCallbackRoute(request)) return request.ip;
      const { orderId, outcome } = request.params as { orderId: string; outcome: string };
      const token = (request.query as Record<string, unknown>).token;
      return verifyCallbackUrl(orderId, outcome, token) ? `${SIGNED_CALLBACK_BUCKET}${orderId}:${outcome}` : request.ip;
    },
    errorResponseBuilder: (_request, context) =>
      Object.assign(new Error(`Too many requests from this client; retry after ${Math.ceil(context.ttl / 1000)} s.`), { statusCode: 429 }),
  });
}
type RawBodyRequest = RoutedRequest & { rawBody?: string };

/** A route's hooks of one kind as a list (Fastify takes one function, a list or none). */
function hookList<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}

/** The first `keepBytes` of `source`; the rest is read and dropped, and over `maxBytes` it is 413. */
function headOf(source: Readable, keepBytes: number, maxBytes: number): Readable {
  let consumed = 0;
  const head: Transform & { receivedEncodedLength?: number } = new Transform({
    transform(chunk: Buffer | string, _encoding, callback) {
      const already = consumed;
      consumed += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      // Fastify checks the bytes that arrived against Content-Length by this property.
      head.receivedEncodedLength = consumed;
      if (consumed > maxBytes)
        return callback(Object.assign(new Error(`A callback body may not exceed ${maxBytes} bytes.`), { statusCode: 413 }));
      callback(null, already < keepBytes ? Buffer.from(chunk).subarray(0, keepBytes - already) : undefined);
    },
  });
  return pipeline(source, head, () => undefined);
}

/**
 * JSON and form bodies. Before it is parsed, a body is checked against BODY_BOUNDS in one linear
 * pass (400 `body_too_complex`), so that no body can hold the event loop in parsing or validation.
 * The provider's callback routes parse nothing: whatever arrived, in any content type or none and
 * up to 16 MiB, is read and its head kept as text (`rawBody`, on those routes only) to be stored;
 * their URL and its token decide, the body is evidence. Elsewhere an unknown content type is 415
 * and a body over 1 MiB is 413.
 */
function registerBodyParsers(fastify: FastifyInstance) {
  // The callback routes' own limit and body reader, on those routes only: no other request runs the hook.
  fastify.addHook('onRoute', (route) => {
    if (!route.url.startsWith(CALLBACK_ROUTE_PREFIX)) return;
    route.bodyLimit = CALLBACK_BODY_MAX_BYTES;
    const keepHead: preParsingAsyncHookHandler = async (_request, _reply, payload) =>
      headOf(payload, CALLBACK_BODY_KEPT_BYTES, CALLBACK_BODY_MAX_BYTES);
    route.preParsing = [...hookList(route.preParsing), keepHead];
  });
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeAllContentTypeParsers();
  const keepForCallback = (request: RawBodyRequest, text: string, done: (error: Error | null, body?: unknown) => void): boolean => {
    if (!isCallbackRoute(request)) return false;
    request.rawBody = text;
    done(null, undefined);
    return true;
  };
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (keepForCallback(request, text, done)) return;
    if (text.trim() === '') return done(null, undefined);
    // Bounded, and inexact number literals quoted (checkedJsonText): a number is never silently rounded.
    const checked = checkedJsonText(text);
    if ('refusal' in checked) return done(checked.refusal, undefined);
    void parseJson(request, checked.text, done);
  });
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (keepForCallback(request, text, done)) return;
    const refusal = bodyRefusal(formExcess(text));
    if (refusal) return done(refusal, undefined);
    done(null, Object.fromEntries(new URLSearchParams(text)));
  });
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    if (keepForCallback(request, body as string, done)) return;
    done(Object.assign(new Error(`Unsupported media type: ${String(request.headers['content-type'])}`), { statusCode: 415 }), undefined);
  });
}

/** The OpenAPI document of an initialised app (src/http/swagger-setup.ts). */
export { buildOpenApiDocument } from './http/swagger-setup';
