import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

type Response = { description?: string; content?: Record<string, { schema?: unknown }> };
type Operation = { summary?: string; tags?: string[]; security?: unknown[]; responses: Record<string, Response> };

/**
 * The Swagger UI is the finance team's tool: every operation of the committed document (which
 * test/docs/openapi.e2e-spec.ts proves is the served one) is tagged by area, summarised, shows
 * what it answers, and documents its errors as problem+json.
 */
const document = JSON.parse(readFileSync(resolve(__dirname, '../../openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
};
const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op, path })));

describe('the OpenAPI document as a finance tool', () => {
  it('has operations for every area', () => {
    const tags = new Set(operations.flatMap(({ op }) => op.tags ?? []));
    expect([...tags].sort()).toEqual(['Distributions', 'Finance', 'Operations', 'Pay-in orders', 'Provider callbacks', 'Virtual cards', 'Wallet links'].sort());
  });

  it.each(operations.map((o) => [o.name, o]))('%s is tagged, summarised and shows its answer', (_name, { op }) => {
    expect(op.tags?.length).toBeGreaterThan(0);
    expect(op.summary).toMatch(/\w/);
    const success = Object.entries(op.responses).filter(([status]) => /^2/.test(status));
    expect(success.length).toBeGreaterThan(0);
    for (const [, response] of success) expect(Object.keys(response.content ?? {}).length).toBeGreaterThan(0);
  });

  it.each(operations.map((o) => [o.name, o]))('%s documents its errors as problem+json', (_name, { op, path }) => {
    const errors = Object.entries(op.responses).filter(([status]) => /^[45]/.test(status));
    expect(errors.map(([status]) => status)).toContain('500');
    for (const [, response] of errors) expect(response.content?.['application/problem+json']?.schema).toEqual({ $ref: '#/components/schemas/ProblemDetailsDto' });
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
