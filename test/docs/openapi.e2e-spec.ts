import { existsSync, readFileSync } from 'node:fs';
import { fetchServedOpenApiDocument, OPENAPI_PATH, serializeOpenApiDocument } from '../../scripts/generate-openapi';
import { testDatabaseUrl } from '../support/test-database';

const STALE = 'openapi.json is stale: run npm run docs:openapi';

/** Where two texts first differ, to point at the change in the failure message. */
function firstDifference(expected: string, actual: string): string {
  const a = expected.split('\n');
  const b = actual.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i])
      return `first difference at line ${i + 1}:\n  committed: ${a[i] ?? '(end of file)'}\n  generated: ${b[i] ?? '(end of file)'}`;
  }
  return 'the files differ';
}

describe('the committed openapi.json', () => {
  it('is the document the service serves at /docs-json', async () => {
    const generated = serializeOpenApiDocument(await fetchServedOpenApiDocument(testDatabaseUrl()));
    if (!existsSync(OPENAPI_PATH)) throw new Error(`${STALE} (${OPENAPI_PATH} does not exist)`);
    const committed = readFileSync(OPENAPI_PATH, 'utf8');
    if (committed !== generated) throw new Error(`${STALE}\n${firstDifference(committed, generated)}`);
  });

  it('is byte-stable: building it twice gives the same text', async () => {
    const [first, second] = [await fetchServedOpenApiDocument(testDatabaseUrl()), await fetchServedOpenApiDocument(testDatabaseUrl())].map(
      serializeOpenApiDocument,
    );
    expect(second).toBe(first);
  });

  it('documents the bearer scheme used by Authorize in the Swagger UI', () => {
    const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8'));
    expect(document.openapi).toMatch(/^3\./);
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.paths['/v1/orders']?.get).toBeDefined();
  });
});
