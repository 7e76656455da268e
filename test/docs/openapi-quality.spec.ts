import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

type Response = { description?: string; content?: Record<string, { schema?: unknown }> };
type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: unknown[];
  responses: Record<string, Response>;
};
type Property = { type?: string | string[]; format?: string; example?: unknown; enum?: unknown[]; $ref?: string; items?: unknown };
type Schema = { properties?: Record<string, Property> };

/**
 * The Swagger UI is the finance team's tool: every operation of the committed document (which
 * test/docs/openapi.e2e-spec.ts proves is the served one) is tagged by area, summarised, shows
 * what it answers, and documents its errors as problem+json.
 */
const document = JSON.parse(readFileSync(resolve(__dirname, '../../openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, Schema> };
  tags?: { name: string; description?: string }[];
  servers?: { url: string }[];
};
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op, path })),
);

describe('the OpenAPI document as a finance tool', () => {
  it('has operations for every area', () => {
    const tags = new Set(operations.flatMap(({ op }) => op.tags ?? []));
    expect([...tags].sort()).toEqual(
      [
        'Customer limits',
        'Customers',
        'Distributions',
        'Finance',
        'Operations',
        'Pay-in orders',
        'Provider callbacks',
        'Virtual cards',
        'Wallet links',
        'Webhooks',
      ].sort(),
    );
  });

  it.each(operations.map((o) => [o.name, o]))('%s is tagged, summarised and shows its answer', (_name, { op }) => {
    expect(op.tags?.length).toBeGreaterThan(0);
    expect(op.summary).toMatch(/\w/);
    const success = Object.entries(op.responses).filter(([status]) => /^2/.test(status));
    expect(success.length).toBeGreaterThan(0);
    // 204 No Content (a deletion) has no answer to show.
    for (const [status, response] of success) if (status !== '204') expect(Object.keys(response.content ?? {}).length).toBeGreaterThan(0);
  });

  it.each(operations.map((o) => [o.name, o]))('%s documents its errors as problem+json', (_name, { op, path }) => {
    const errors = Object.entries(op.responses).filter(([status]) => /^[45]/.test(status));
    expect(errors.map(([status]) => status)).toContain('500');
    for (const [, response] of errors)
      expect(response.content?.['application/problem+json']?.schema).toEqual({ $ref: '#/components/schemas/ProblemDetailsDto' });
    const secured = (op.security ?? []).length > 0;
    if (secured) {
      expect(op.security).toEqual([{ bearer: [] }]);
      expect(Object.keys(op.responses)).toContain('401');
    } else {
      // Only these are open without a token.
      expect(path).toMatch(/^\/(health|metrics|v1\/callbacks\/payin)/);
    }
  });

  it('declares the bearer scheme the Authorize button uses', () => {
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  });
});

/** Every string property of every schema, with where it is. */
const stringProperties = Object.entries(document.components.schemas).flatMap(([schema, { properties }]) =>
  Object.entries(properties ?? {})
    .filter(([, property]) => property.type === 'string' || (Array.isArray(property.type) && property.type.includes('string')))
    .map(([name, property]) => ({ name: `${schema}.${name}`, property: name, ...property })),
);
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

describe('the OpenAPI document for client generators', () => {
  it('names every operation with a unique camelCase operationId (generated clients call them by it)', () => {
    const ids = operations.map(({ name, op }) => [name, op.operationId]);
    const badlyNamed = ids.filter(([, id]) => !/^[a-z][a-zA-Z0-9]*$/.test(id ?? ''));
    expect(badlyNamed).toEqual([]);
    expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length);
  });

  it('keeps the operationIds frontends already call', () => {
    const idOf = (method: string, path: string) => document.paths[path]?.[method]?.operationId;
    expect({
      createOrder: idOf('post', '/v1/orders'),
      listOrders: idOf('get', '/v1/orders'),
      getOrder: idOf('get', '/v1/orders/{id}'),
      streamOrderEvents: idOf('get', '/v1/orders/{id}/events'),
      exportOrdersCsv: idOf('get', '/v1/orders/export.csv'),
      topUpCard: idOf('post', '/v1/cards/{id}/topup'),
      withdrawFromCard: idOf('post', '/v1/cards/{id}/withdraw'),
      freezeCard: idOf('post', '/v1/cards/{id}/freeze'),
      createCardUser: idOf('post', '/v1/card-users'),
      listCallbacks: idOf('get', '/v1/callbacks'),
      getHealthReady: idOf('get', '/health/ready'),
      resolveOrder: idOf('post', '/v1/orders/{id}/resolution'),
      listAuditEvents: idOf('get', '/v1/audit-events'),
      getAttentionReport: idOf('get', '/v1/reports/attention'),
    }).toEqual({
      createOrder: 'createOrder',
      listOrders: 'listOrders',
      getOrder: 'getOrder',
      streamOrderEvents: 'streamOrderEvents',
      exportOrdersCsv: 'exportOrdersCsv',
      topUpCard: 'topUpCard',
      withdrawFromCard: 'withdrawFromCard',
      freezeCard: 'freezeCard',
      createCardUser: 'createCardUser',
      listCallbacks: 'listCallbacks',
      getHealthReady: 'getHealthReady',
      resolveOrder: 'resolveOrder',
      listAuditEvents: 'listAuditEvents',
      getAttentionReport: 'getAttentionReport',
    });
  });

  it.each(operations.map((o) => [o.name, o]))('%s is described', (_name, { op }) => {
    expect(op.description).toMatch(/\w/);
  });

  it('declares every tag it uses, described, and the server (relative: the origin serving the document)', () => {
    const used = [...new Set(operations.flatMap(({ op }) => op.tags ?? []))].sort();
    expect((document.tags ?? []).map((tag) => tag.name).sort()).toEqual(used);
    for (const tag of document.tags ?? []) expect(tag.description).toMatch(/\w/);
    expect(document.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  it('gives every date-time property the date-time format and an ISO 8601 example (never "string")', () => {
    const dateLike = stringProperties.filter((p) => p.format === 'date-time' || /(At|^at|^from|^to)$/.test(p.property));
    expect(dateLike.length).toBeGreaterThan(20);
    const wrong = dateLike
      .filter((p) => p.format !== 'date-time' || typeof p.example !== 'string' || !ISO_DATE_TIME.test(p.example))
      .map((p) => `${p.name}: ${p.format} ${String(p.example)}`);
    expect(wrong).toEqual([]);
  });

  it('gives every other string property an example or an enum (Swagger UI shows them instead of "string")', () => {
    const bare = stringProperties.filter((p) => p.example === undefined && p.enum === undefined).map((p) => p.name);
    expect(bare).toEqual([]);
  });

  it('documents what POST /v1/orders answers when the provider cannot be used: 502, 503 and 429', () => {
    const responses = document.paths['/v1/orders'].post.responses;
    expect(responses['502']?.description).toMatch(/provider_unreachable/);
    expect(responses['503']?.description).toMatch(/provider_rate_limited/);
    expect(responses['429']?.description).toMatch(/provider_budget_exhausted/);
    for (const status of ['502', '503', '429'])
      expect(responses[status].content?.['application/problem+json']?.schema).toEqual({ $ref: '#/components/schemas/ProblemDetailsDto' });
  });
});
