import { randomUUID } from 'node:crypto';
import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { documentProblemResponses, ProblemDetailsDto } from './common/openapi-problems';
import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AppModule } from './app.module';
import { createValidationPipe } from './common/validation';
import type { AppConfig } from './config/app-config';
import { PinoNestLogger } from './logging/logger';
import { redactUrl, registerSecretValue } from './logging/redaction';
import { requestContext } from './logging/request-context';
import { MetricsService } from './metrics/metrics.service';

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const REQUEST_ID_HEADER = 'x-request-id';

/** Builds the HTTP application (not listening yet). Used by the service entry point and by tests. */
export async function createApp(config: AppConfig, logger: Logger, options: { extraImports?: DynamicModule['imports'] } = {}): Promise<NestFastifyApplication> {
  // Whatever path a configured secret takes (an error echoed by the provider, a URL), logs and records scrub it.
  for (const secret of [config.provider.secretKey, config.provider.apiKey, config.provider.spAuthToken, config.callbackSigningSecret, config.auth.jwtSecret, config.dataEncryptionKey.toString('base64')]) {
    registerSecretValue(secret);
  }
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
  registerBodyParsers(fastify);
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    requestContext.run({ requestId: request.id }, done);
  });
  const metrics = app.get(MetricsService);
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions?.url ?? 'unmatched';
    metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    logger.info(
      { requestId: request.id, method: request.method, url: redactUrl(request.url), status: reply.statusCode, durationMs: Math.round(reply.elapsedTime) },
      'http request',
    );
    done();
  });

  await registerHttpProtections(app, config);
  app.useGlobalPipes(createValidationPipe());
  app.enableShutdownHooks();
  setUpSwagger(app);
  await app.init();
  return app;
}

const CALLBACK_PREFIX = '/v1/callbacks/';
/** Routes anyone may call without a token: limited per client IP. */
const PUBLIC_PREFIXES = [CALLBACK_PREFIX, '/health', '/metrics', '/docs'];

/**
 * Security headers (helmet; the CSP lets the Swagger UI run), CORS for the configured origins
 * only, and a per-IP rate limit on the public routes. Authenticated routes are bounded by their
 * callers' tokens and by the provider budget.
 */
async function registerHttpProtections(app: NestFastifyApplication, config: AppConfig) {
  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'", "'unsafe-inline'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    crossOriginEmbedderPolicy: false,
  });
  await app.register(cors, {
    origin: config.corsOrigins.length ? config.corsOrigins : false,
    credentials: false,
    exposedHeaders: [REQUEST_ID_HEADER, 'retry-after', 'idempotent-replayed'],
    allowedHeaders: ['authorization', 'content-type', 'idempotency-key', REQUEST_ID_HEADER],
    maxAge: 600,
  });
  await app.register(rateLimit, {
    global: true,
    max: config.publicRateLimitPerMinute,
    timeWindow: 60_000,
    allowList: (request) => !PUBLIC_PREFIXES.some((prefix) => request.url.startsWith(prefix)),
    errorResponseBuilder: (_request, context) =>
      Object.assign(new Error(`Too many requests from this client; retry after ${Math.ceil(context.ttl / 1000)} s.`), { statusCode: 429 }),
  });
}
type RawBodyRequest = { url: string; rawBody?: string };

/**
 * JSON and form bodies for every route, each also kept as text (`rawBody`) so that provider
 * callbacks are stored exactly as they arrived. Callback routes accept any content type and an
 * empty JSON body; elsewhere an unknown content type is 415.
 */
function registerBodyParsers(fastify: FastifyInstance) {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    (request as RawBodyRequest).rawBody = text;
    if (text.trim() === '') return done(null, undefined);
    parseJson(request, text, done);
  });
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, body, done) => {
    (request as RawBodyRequest).rawBody = body as string;
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    if (!request.url.startsWith(CALLBACK_PREFIX)) {
      return done(Object.assign(new Error(`Unsupported media type: ${String(request.headers['content-type'])}`), { statusCode: 415 }), undefined);
    }
    (request as RawBodyRequest).rawBody = body as string;
    done(null, body);
  });
}

/** The OpenAPI document of an initialised app: every route, its auth, and problem+json errors. */
export function buildOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Payments BFF')
      .setDescription(
        'Merchant-owned backend-for-frontend in front of the payment provider. Every route but health, metrics, docs and provider callbacks needs `Authorization: Bearer <JWT>` (mint one with `npm run token -- --sub alice --roles finance`, then press Authorize). Errors are `application/problem+json` with a stable `code` and the `requestId`. Money-moving POSTs need an `Idempotency-Key`.',
      )
      .setVersion('1')
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
      .build(),
    { extraModels: [ProblemDetailsDto] },
  );
  return documentProblemResponses(document);
}

function setUpSwagger(app: NestFastifyApplication) {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), { jsonDocumentUrl: 'docs-json', customSiteTitle: 'Payments BFF API' });
}
