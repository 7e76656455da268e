/**
 * `/docs/finance-json` holds exactly the operations the finance role may call, each under one task,
 * and `/docs-json` still holds every route. The routes are read from the application itself (each
 * controller's handlers and their `@Auth` roles), and every operation is called with a finance
 * token: what the document says is what the service answers.
 */
import { randomUUID } from 'node:crypto';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AUTH_ROLES_KEY } from '../../src/auth/auth.guard';
import { satisfiesRoles, type Role } from '../../src/auth/auth.types';
import { FINANCE_TASKS } from '../../src/common/finance-tasks';
import { ADMIN_ONLY_SUFFIX, operationsOf } from '../../src/http/openapi-documents';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** A route of a controller, as OpenAPI spells it (`get /v1/orders/{id}`), with its `@Auth` roles (undefined: public). */
interface AppRoute {
  key: string;
  roles: readonly Role[] | undefined;
}

/** swagger's metadata key of `@ApiExcludeEndpoint()`: such a route is in no document by design. */
const EXCLUDED_FROM_DOCS = 'swagger/apiExcludeEndpoint';

/** Every handler of every controller of the application, with its path and roles. */
function routesOf(service: TestService): AppRoute[] {
  const routes: AppRoute[] = [];
  for (const module of service.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (!controller) continue;
      const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler: unknown = Object.getOwnPropertyDescriptor(controller.prototype, name)?.value;
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        if ((Reflect.getMetadata(EXCLUDED_FROM_DOCS, handler) as { disable?: boolean } | undefined)?.disable) continue;
        const path =
          `/${[base, String(Reflect.getMetadata(PATH_METADATA, handler) ?? '')].filter((part) => part && part !== '/').join('/')}`
            .replace(/\/+/g, '/')
            .replace(/:(\w+)/g, '{$1}');
        routes.push({
          key: `${RequestMethod[method].toLowerCase()} ${path}`,
          roles: Reflect.getMetadata(AUTH_ROLES_KEY, handler) as Role[] | undefined,
        });
      }
    }
  }
  return routes;
}

const keysOf = (document: OpenAPIObject) => operationsOf(document).map(({ method, path }) => `${method} ${path}`);

describe('the finance document', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let finance: string;
  let full: OpenAPIObject;
  let financeDocument: OpenAPIObject;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    finance = await service.bearer('docs-finance', 'finance');
    const get = async (url: string) => {
      const res = await service.app.inject({ method: 'GET', url });
      if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}`);
      return JSON.parse(res.body) as OpenAPIObject;
    };
    full = await get('/docs-json');
    financeDocument = await get('/docs/finance-json');
  }, 60_000);

  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  /** Calls `method path` as finance: ids are fresh UUIDs, a body is `{}`; the status only. */
  async function callAsFinance(key: string): Promise<number> {
    const [method, path] = key.split(' ');
    const res = await service.app.inject({
      method: method.toUpperCase() as 'GET',
      url: path.replace(/\{\w+\}/g, () => randomUUID()),
      headers: { authorization: `Bearer ${finance}`, 'idempotency-key': randomUUID() },
      ...(method === 'get' || method === 'delete' ? {} : { payload: {} }),
    });
    return res.statusCode;
  }

  it('serves its Swagger UI at /docs/finance, with the finance document in it', async () => {
    const page = await service.app.inject({ method: 'GET', url: '/docs/finance' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('swagger-ui');
    const init = await service.app.inject({ method: 'GET', url: '/docs/finance/swagger-ui-init.js' });
    expect(init.statusCode).toBe(200);
    expect(init.body).toContain('Payments BFF: finance');
    expect(init.body).not.toContain('resolveOrder');
    const asset = await service.app.inject({ method: 'GET', url: '/docs/finance/swagger-ui-bundle.js' });
    expect(asset.statusCode).toBe(200);
  });

  it('/docs-json documents every route of every controller', () => {
    const routes = routesOf(service).map((route) => route.key);
    expect(routes.length).toBeGreaterThan(40);
    expect(new Set(keysOf(full))).toEqual(new Set(routes));
  });

  it('lists exactly the routes whose @Auth roles admit finance', () => {
    const financeRoutes = routesOf(service)
      .filter((route) => route.roles !== undefined && satisfiesRoles({ id: 'f', roles: ['finance'] }, route.roles))
      .map((route) => route.key);
    expect(financeRoutes.length).toBeGreaterThan(10);
    expect(new Set(keysOf(financeDocument))).toEqual(new Set(financeRoutes));
  });

  it('answers a finance token on every operation it lists, never 403', async () => {
    const refused: string[] = [];
    for (const key of keysOf(financeDocument)) if ((await callAsFinance(key)) === 403) refused.push(key);
    expect(refused).toEqual([]);
  }, 60_000);

  it('leaves out only what answers finance 403 or needs no token', async () => {
    const listed = new Set(keysOf(financeDocument));
    const leftOut = operationsOf(full).filter(({ method, path }) => !listed.has(`${method} ${path}`));
    const public_ = leftOut.filter(({ operation }) => !operation.security);
    // The provider's callbacks, health and metrics: machines call them, without a token.
    expect(public_.map(({ path }) => path).sort()).toEqual([
      '/health/live',
      '/health/ready',
      '/metrics',
      '/v1/callbacks/payin/{orderId}/{outcome}',
    ]);
    const allowed: string[] = [];
    for (const { method, path } of leftOut.filter(({ operation }) => operation.security)) {
      if ((await callAsFinance(`${method} ${path}`)) !== 403) allowed.push(`${method} ${path}`);
    }
    expect(allowed).toEqual([]);
  }, 60_000);

  it('files each operation under exactly one task, in plain words with a one-line summary', () => {
    const taskNames = Object.values(FINANCE_TASKS).map((task) => task.name);
    expect((financeDocument.tags ?? []).map((tag) => tag.name)).toEqual(taskNames);
    const used = new Set<string>();
    for (const { method, path, operation } of operationsOf(financeDocument)) {
      expect({ operation: `${method} ${path}`, tags: operation.tags }).toEqual({
        operation: `${method} ${path}`,
        tags: [expect.any(String)],
      });
      expect(taskNames).toContain(operation.tags![0]);
      used.add(operation.tags![0]);
      expect(operation.summary).toMatch(/^[A-Z][^\n]{5,90}$/);
      expect(operation.summary).not.toMatch(/\((finance|admin)/);
    }
    // No task is empty: each groups something finance staff can do.
    expect([...used].sort()).toEqual([...taskNames].sort());
    expect(financeDocument.info.title).toContain('finance');
  });

  it('marks in /docs-json the operations only an admin may call', () => {
    const adminOnly = operationsOf(full).filter(({ operation }) => operation.summary?.endsWith(ADMIN_ONLY_SUFFIX));
    expect(adminOnly.map(({ operation }) => operation.operationId)).toEqual(
      expect.arrayContaining([
        'resolveOrder',
        'clearOrderReview',
        'resolveCardOperation',
        'resolveDistribution',
        'redeliverEvent',
        'createDistribution',
      ]),
    );
    for (const { operation } of adminOnly) {
      expect(operation['x-allowed-roles']).toEqual(['admin']);
      expect(operation.description).toMatch(/^\*\*Admin only\*\*/);
    }
    const listOrders = operationsOf(full).find(({ operation }) => operation.operationId === 'listOrders')!.operation;
    expect(listOrders.summary).not.toContain(ADMIN_ONLY_SUFFIX);
    expect(listOrders['x-allowed-roles']).toEqual(['customer', 'finance', 'admin']);
  });
});
