import request from 'supertest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { ProbeModule } from '../support/probe.module';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

const PROBLEM_JSON = /^application\/problem\+json/;

describe('the HTTP application', () => {
  let sandbox: RunningSandbox;
  let service: TestService;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, {}, [ProbeModule]);
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  describe('health', () => {
    it('is live', async () => {
      await request(service.server).get('/health/live').expect(200, { status: 'ok' });
    });

    it('is ready when the database answers and every migration is applied; without a replica, it says so', async () => {
      const res = await request(service.server).get('/health/ready').expect(200);
      expect(res.body).toEqual({
        status: 'ok',
        checks: { database: 'up', migrations: 'applied', replica: { state: 'disabled', lagSeconds: null } },
      });
    });

    it('is not ready, with a problem naming the migration, when one is missing', async () => {
      const [{ name }] = await service.prisma.$queryRaw<{ name: string }[]>`SELECT migration_name AS name FROM _prisma_migrations LIMIT 1`;
      await service.prisma.$executeRaw`UPDATE _prisma_migrations SET rolled_back_at = now() WHERE migration_name = ${name}`;
      try {
        const res = await request(service.server).get('/health/ready').expect(503);
        expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
        expect(res.body).toMatchObject({ code: 'not_ready', status: 503 });
        expect(res.body.detail).toContain(name);
      } finally {
        await service.prisma.$executeRaw`UPDATE _prisma_migrations SET rolled_back_at = NULL WHERE migration_name = ${name}`;
      }
    });
  });

  describe('docs', () => {
    it('serves the OpenAPI document with the bearer scheme', async () => {
      const res = await request(service.server).get('/docs-json').expect(200);
      expect(res.body.openapi).toMatch(/^3\./);
      expect(res.body.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(res.body.paths['/health/ready']).toBeDefined();
    });

    it('serves the Swagger UI', async () => {
      const res = await request(service.server).get('/docs').redirects(1).expect(200);
      expect(res.text).toContain('swagger');
    });
  });

  describe('request ids', () => {
    it('mints one when none is given', async () => {
      const res = await request(service.server).get('/health/live');
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('echoes the caller’s id, in the response and in the logs', async () => {
      const res = await request(service.server).get('/health/live').set('x-request-id', 'checkout-7f3a');
      expect(res.headers['x-request-id']).toBe('checkout-7f3a');
      expect(service.logs.entries().some((e) => e.requestId === 'checkout-7f3a' && e.msg === 'http request')).toBe(true);
    });

    it('replaces an id that is not a sane token', async () => {
      const res = await request(service.server).get('/health/live').set('x-request-id', 'bad id\twith spaces');
      expect(res.headers['x-request-id']).not.toContain(' ');
    });
  });

  describe('problem+json', () => {
    it('answers an unknown route with 404 problem+json carrying the request id', async () => {
      const res = await request(service.server).get('/nowhere').set('x-request-id', 'r-404').expect(404);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body).toEqual({
        type: expect.stringContaining('not_found'),
        title: 'Not found',
        status: 404,
        detail: expect.any(String),
        code: 'not_found',
        requestId: 'r-404',
      });
    });

    it('lists every invalid field, nested ones included, and refuses unknown fields', async () => {
      const res = await request(service.server)
        .post('/probe/validate')
        .send({ email: 'nope', items: [{ name: 'a', quantity: 0 }, { quantity: 2 }], extra: true })
        .expect(400);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body).toMatchObject({ status: 400, code: 'validation_failed', requestId: expect.any(String) });
      const fields = (res.body.errors as { field: string }[]).map((e) => e.field);
      expect(fields).toEqual(expect.arrayContaining(['email', 'items[0].quantity', 'items[1].name', 'extra']));
      for (const error of res.body.errors) expect(error.message).toEqual(expect.any(String));
    });

    it('answers malformed JSON with 400 problem+json', async () => {
      const res = await request(service.server)
        .post('/probe/validate')
        .set('content-type', 'application/json')
        .send('{"email":')
        .expect(400);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body).toMatchObject({ status: 400, code: 'bad_request' });
    });

    it('answers an unsupported content type with 415 problem+json', async () => {
      const res = await request(service.server).post('/probe/validate').set('content-type', 'application/xml').send('<a/>');
      expect(res.status).toBe(415);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    });

    it('hides an unexpected error behind a generic 500, and logs it with its stack', async () => {
      const res = await request(service.server).get('/probe/crash').set('x-request-id', 'r-crash').expect(500);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body).toMatchObject({ status: 500, code: 'internal_error', requestId: 'r-crash' });
      expect(JSON.stringify(res.body)).not.toMatch(/hunter2|app\.js|at /);
      const logged = service.logs.entries().find((e) => e.requestId === 'r-crash' && e.level === 'error');
      expect(JSON.stringify(logged)).toContain('stack');
    });

    it('maps a spent provider budget to 429 with Retry-After', async () => {
      const res = await request(service.server).get('/probe/budget').expect(429);
      expect(res.headers['retry-after']).toBe('321');
      expect(res.body).toMatchObject({ code: 'provider_budget_exhausted', retryAfterSeconds: 321 });
    });
  });

  describe('auth', () => {
    it('refuses a missing token with 401 problem+json', async () => {
      const res = await request(service.server).get('/probe/finance').expect(401);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body.code).toBe('unauthenticated');
    });

    it('refuses a customer on a finance route with 403, lets finance and admin in', async () => {
      await request(service.server)
        .get('/probe/finance')
        .auth(await service.bearer('alice'), { type: 'bearer' })
        .expect(403);
      const res = await request(service.server)
        .get('/probe/finance')
        .auth(await service.bearer('fin', 'finance'), { type: 'bearer' })
        .expect(200);
      expect(res.body).toEqual({ id: 'fin', roles: ['finance'] });
      await request(service.server)
        .get('/probe/finance')
        .auth(await service.bearer('root', 'admin'), { type: 'bearer' })
        .expect(200);
    });
  });
});
