/**
 * client/ is generated from openapi.json: its two generated files are what `npm run client:generate`
 * writes from the committed document (regenerated in memory by `generate.mjs --check`), and it has
 * one method per operationId, with an Idempotency-Key exactly where the document declares one.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { OPERATIONS } from '../../client/src/openapi/operations';
import { createClient } from '../../client/src';

const ROOT = resolve(__dirname, '../..');

interface OpenApiOperation {
  operationId: string;
  parameters?: { in: string; name: string }[];
}

function documentOperations(): OpenApiOperation[] {
  const document = JSON.parse(readFileSync(resolve(ROOT, 'openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, OpenApiOperation>>;
  };
  return Object.values(document.paths).flatMap((item) =>
    ['get', 'put', 'post', 'delete', 'patch'].flatMap((method) => (item[method] ? [item[method]] : [])),
  );
}

describe('the client generated from openapi.json (client/)', () => {
  it('is what `npm run client:generate` writes from the committed openapi.json', async () => {
    const check = await promisify(execFile)(process.execPath, ['client/scripts/generate.mjs', '--check'], { cwd: ROOT }).then(
      ({ stdout }) => stdout,
      (error: { stderr?: string }) => `stale: ${error.stderr ?? String(error)}`,
    );
    expect(check).toMatch(/^client: up to date/);
  }, 60_000);

  it('has one method per operationId, and generates an Idempotency-Key exactly where the document declares the header', () => {
    const operations = documentOperations();
    const client = createClient({ baseUrl: 'http://127.0.0.1:1', getToken: () => null });
    expect(Object.keys(OPERATIONS).sort()).toEqual(operations.map((operation) => operation.operationId).sort());
    for (const { operationId } of operations)
      expect([operationId, typeof (client as unknown as Record<string, unknown>)[operationId]]).toEqual([operationId, 'function']);
    const withKey = operations.filter((operation) =>
      operation.parameters?.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'),
    );
    expect(withKey.length).toBeGreaterThan(5);
    expect(
      Object.entries(OPERATIONS)
        .filter(([, spec]) => spec.idempotent)
        .map(([id]) => id)
        .sort(),
    ).toEqual(withKey.map((operation) => operation.operationId).sort());
    expect(OPERATIONS.createOrder).toMatchObject({ method: 'POST', path: '/v1/orders', idempotent: true, body: 'required' });
  });
});
