import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { documentProblemResponses, ProblemDetailsDto } from '../common/openapi-problems';
import type { AppConfig } from '../config/app-config';
import { financeDocumentOf, markAdminOnly } from './openapi-documents';
import { keepDownloadBytes } from './swagger-downloads';
import { swaggerSignIn } from './swagger-sign-in';

/** The areas of the API, in the order the Swagger UI shows them (each controller is tagged with one). */
const API_TAGS: ReadonlyArray<readonly [name: string, description: string]> = [
  ['Pay-in orders', 'Collect payments from mobile wallets, follow them live, export them'],
  ['Virtual cards', 'Card users, virtual cards, top-ups, withdrawals and their operations'],
  ['Wallet links', 'Link wallet users to the merchant (distributions pay them by matricule)'],
  ['Distributions', 'Split a payment between beneficiaries'],
  ['Finance', 'Reports, audit trail and manual resolution of undecided operations'],
  ['Provider callbacks', 'Notifications the payment provider sends, and what was stored of them'],
  ['Webhooks', "Where the merchant's systems receive events: webhook endpoints and their signing secrets"],
  ['Customer limits', "Each customer's hourly share of the provider budget: read it, set or clear an override"],
  ['Customers', "A customer's personal data: its erasure, while the money stays readable"],
  ['Operations', 'Health and metrics, for orchestrators and monitoring'],
];

/** The OpenAPI document of an initialised app: every route, its auth, and problem+json errors. */
export function buildOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Payments BFF')
    .setDescription(
      'Merchant-owned backend-for-frontend in front of the payment provider. Every route but health, metrics, docs and provider callbacks needs `Authorization: Bearer <JWT>` (mint one with `npm run token -- --sub alice --roles finance`, then press Authorize). Errors are `application/problem+json` with a stable `code` and the `requestId`. Money-moving POSTs need an `Idempotency-Key`.',
    )
    .setVersion('1')
    // Relative: the origin that serves this document, wherever the service is deployed (no machine's URL in the committed copy).
    .addServer('/', 'This service (the origin serving this document)')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer');
  for (const [name, description] of API_TAGS) builder.addTag(name, description);
  const document = SwaggerModule.createDocument(app, builder.build(), { extraModels: [ProblemDetailsDto] });
  return markAdminOnly(documentProblemResponses(document));
}

/** Swagger UI at /docs (every route) and /docs/finance (the finance role's, by task). */
export function setUpSwagger(app: NestFastifyApplication, config: AppConfig) {
  // Authorize signs in at the company's OpenID Connect provider when configured (src/http/swagger-sign-in.ts).
  const { swaggerOptions: signInOptions, patchDocumentOnRequest } = swaggerSignIn(app, config);
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    customSiteTitle: 'Payments BFF API',
    // The bearer token survives a reload of the page (kept in the browser's localStorage); downloads keep their BOM.
    swaggerOptions: { persistAuthorization: true, requestInterceptor: keepDownloadBytes, ...signInOptions },
    patchDocumentOnRequest,
  });
  // Only what the finance role may call, by task (src/http/openapi-documents.ts).
  SwaggerModule.setup('docs/finance', app, () => financeDocumentOf(buildOpenApiDocument(app)), {
    jsonDocumentUrl: 'docs/finance-json',
    customSiteTitle: 'Payments BFF: finance',
    swaggerOptions: { persistAuthorization: true, requestInterceptor: keepDownloadBytes, ...signInOptions },
    patchDocumentOnRequest,
  });
}
