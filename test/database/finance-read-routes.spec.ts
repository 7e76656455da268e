import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PRIMARY_ROUTES, REPLICA_ROUTES } from '../replica/finance-read-routes';

describe('the finance GET routes and where they read', () => {
  it('files every finance GET route of the API under the replica or the primary, once', () => {
    const openapi = JSON.parse(readFileSync(resolve(__dirname, '../../openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    const financeGets = Object.entries(openapi.paths).flatMap(([path, ops]) => (ops.get?.['x-finance-task'] ? [path] : []));
    expect([...REPLICA_ROUTES.map((r) => r.route), ...PRIMARY_ROUTES].sort()).toEqual(financeGets.sort());
  });
});
