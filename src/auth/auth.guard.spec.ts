import 'reflect-metadata';
import { Catch, Controller, Get, Module, type ArgumentsHost, type ExceptionFilter, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ConfigService } from '@nestjs/config';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { loadAppConfig, type AppConfig } from '../config/app-config';
import { configModuleFor } from '../config/config.module';
import { DomainError, ForbiddenError, UnauthenticatedError } from '../common/domain-error';
import { Auth, CurrentUser } from './auth.decorator';
import {
  AUTH_ROUTE_CONFIG_KEY,
  AuthGuard,
  authenticateRequest,
  authorizeRequest,
  authorizeRequestSoon,
  DuplicateAuthorizationError,
  type AuthenticatedRequest,
} from './auth.guard';
import { AuthModule } from './auth.module';
import type { AuthUser, Role } from './auth.types';
import { mintToken } from './token-minter';
import { JwtVerifier } from './jwt-verifier.service';

const SECRET = 'guard-test-secret-of-at-least-thirty-two-chars';
const config: AppConfig = { ...loadAppConfig({}), auth: { jwtSecret: SECRET } };
const tokenFor = (roles: Role[], sub = 'alice') => mintToken({ sub, roles, ttl: '5m', secret: SECRET });

@Auth('finance')
class ReportsController {
  summary() {}
  @Auth()
  anyone() {}
  @Auth('admin')
  distribute() {}
}

function contextFor(handler: keyof ReportsController, headers: AuthenticatedRequest['headers'], rawHeaders?: string[]) {
  const request: AuthenticatedRequest = { headers, ...(rawHeaders ? { raw: { rawHeaders } } : {}) };
  const context = {
    switchToHttp: () => ({ getRequest: () => request }),
    getHandler: () => ReportsController.prototype[handler],
    getClass: () => ReportsController,
  } as unknown as ExecutionContext;
  return { request, context };
}

describe('AuthGuard', () => {
  const guard = new AuthGuard(new Reflector(), new JwtVerifier(new ConfigService(config)));
  const check = (handler: keyof ReportsController, headers: AuthenticatedRequest['headers']) =>
    guard.canActivate(contextFor(handler, headers).context);

  it('attaches the verified caller as request.user', async () => {
    const { request, context } = contextFor('summary', { authorization: `Bearer ${await tokenFor(['finance'])}` });
    await expect(guard.canActivate(context)).resolves.toBe(true);
    expect(request.user).toEqual({ id: 'alice', roles: ['finance'] });
  });

  it('refuses a customer on a finance route', async () => {
    const attempt = check('summary', { authorization: `Bearer ${await tokenFor(['customer'])}` });
    await expect(attempt).rejects.toBeInstanceOf(ForbiddenError);
    await expect(attempt).rejects.toThrow('This operation requires one of the roles: finance');
  });

  it('lets admin through every requirement, and finance not through an admin one', async () => {
    const admin = { authorization: `Bearer ${await tokenFor(['admin'])}` };
    await expect(check('summary', admin)).resolves.toBe(true);
    await expect(check('distribute', admin)).resolves.toBe(true);
    await expect(check('distribute', { authorization: `Bearer ${await tokenFor(['finance'])}` })).rejects.toBeInstanceOf(ForbiddenError);
  });

  it('lets any authenticated user through a route without roles (the handler overrides the class)', async () => {
    await expect(check('anyone', { authorization: `Bearer ${await tokenFor(['customer'])}` })).resolves.toBe(true);
  });

  it('refuses a missing, empty or non-bearer Authorization header', async () => {
    await expect(check('summary', {})).rejects.toThrow(new UnauthenticatedError('Missing bearer token'));
    await expect(check('summary', { authorization: '' })).rejects.toThrow('Missing bearer token');
    await expect(check('summary', { authorization: 'Basic YWxpY2U6cGFzcw==' })).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(check('summary', { authorization: 'Bearer ' })).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it('refuses two Authorization headers with 400, even when node kept only the first', async () => {
    const token = await tokenFor(['admin']);
    await expect(check('summary', { authorization: [`Bearer ${token}`, `Bearer ${token}`] })).rejects.toBeInstanceOf(
      DuplicateAuthorizationError,
    );
    const raw = ['Host', 'x', 'Authorization', `Bearer ${token}`, 'authorization', 'Bearer other'];
    const attempt = guard.canActivate(contextFor('summary', { authorization: `Bearer ${token}` }, raw).context);
    await expect(attempt).rejects.toBeInstanceOf(DuplicateAuthorizationError);
    await expect(attempt).rejects.toMatchObject({ status: 400, code: 'duplicate_authorization_header' });
    const single = ['Host', 'x', 'Authorization', `Bearer ${token}`, 'X-Authorization', 'y'];
    await expect(guard.canActivate(contextFor('summary', { authorization: `Bearer ${token}` }, single).context)).resolves.toBe(true);
  });

  it('accepts the scheme in any case', async () => {
    await expect(check('summary', { authorization: `bearer ${await tokenFor(['finance'])}` })).resolves.toBe(true);
  });
});

describe('authenticateRequest (the HTTP layer, before the body is read)', () => {
  const verifier = new JwtVerifier(new ConfigService(config));
  const guard = new AuthGuard(new Reflector(), verifier);

  it('verifies once: the guard uses its caller, and still checks the roles', async () => {
    const { request, context } = contextFor('summary', { authorization: `Bearer ${await tokenFor(['customer'], 'carol')}` });
    await expect(authenticateRequest(verifier, request)).resolves.toEqual({ id: 'carol', roles: ['customer'] });
    const verify = jest.spyOn(verifier, 'verify');
    // Nothing to wait for: the refusal is thrown at once (Nest's guard runner awaits in an async function either way).
    expect(() => guard.canActivate(context)).toThrow(ForbiddenError);
    expect(request.user).toEqual({ id: 'carol', roles: ['customer'] });
    expect(verify).not.toHaveBeenCalled();
    verify.mockRestore();
  });

  it('authorizeRequest checks the roles too', async () => {
    const request = { headers: { authorization: `Bearer ${await tokenFor(['customer'])}` } };
    await expect(authorizeRequest(verifier, request, ['finance'])).rejects.toBeInstanceOf(ForbiddenError);
    await expect(authorizeRequest(verifier, request, [])).resolves.toBeUndefined();
    await expect(
      authorizeRequest(verifier, { headers: { authorization: `Bearer ${await tokenFor(['admin'])}` } }, ['finance']),
    ).resolves.toBeUndefined();
  });

  it('authorizeRequestSoon: a token verified lately is checked at once (roles too); another one through a promise', async () => {
    const request = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
    const fresh = await tokenFor(['customer'], 'dora');
    const verifying = authorizeRequestSoon(verifier, request(fresh), []);
    expect(verifying).toBeInstanceOf(Promise);
    await expect(verifying).resolves.toBeUndefined();
    const again = request(fresh);
    expect(authorizeRequestSoon(verifier, again, [])).toBeUndefined();
    // The guard then uses the caller authenticated at the edge.
    const { request: routed, context } = contextFor('summary', again.headers);
    expect(authorizeRequestSoon(verifier, routed, [])).toBeUndefined();
    expect(() => guard.canActivate(context)).toThrow(ForbiddenError);
    expect(routed.user).toEqual({ id: 'dora', roles: ['customer'] });
    expect(() => authorizeRequestSoon(verifier, request(fresh), ['finance'])).toThrow(ForbiddenError);
    const raw = ['Authorization', `Bearer ${fresh}`, 'authorization', `Bearer ${fresh}`];
    expect(() => authorizeRequestSoon(verifier, { ...request(fresh), raw: { rawHeaders: raw } }, [])).toThrow(DuplicateAuthorizationError);
    expect(() => authorizeRequestSoon(verifier, { headers: { authorization: 'Basic abc' } }, [])).toThrow(UnauthenticatedError);
    await expect(authorizeRequestSoon(verifier, { headers: {} }, [])).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it('refuses what the guard refuses: no token, a bad one, two headers', async () => {
    await expect(authenticateRequest(verifier, { headers: {} })).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(authenticateRequest(verifier, { headers: { authorization: 'Bearer nope' } })).rejects.toBeInstanceOf(UnauthenticatedError);
    const token = await tokenFor(['admin']);
    const raw = ['Authorization', `Bearer ${token}`, 'Authorization', `Bearer ${token}`];
    await expect(
      authenticateRequest(verifier, { headers: { authorization: `Bearer ${token}` }, raw: { rawHeaders: raw } }),
    ).rejects.toBeInstanceOf(DuplicateAuthorizationError);
  });

  it('a caller set on the request by anything else is not trusted: the guard verifies', async () => {
    const { request, context } = contextFor('summary', {});
    request.user = { id: 'mallory', roles: ['admin'] };
    await expect(guard.canActivate(context)).rejects.toBeInstanceOf(UnauthenticatedError);
  });
});

describe('@Auth on a Fastify application', () => {
  @Controller('probe')
  class ProbeController {
    @Get('me')
    @Auth()
    me(@CurrentUser() user: AuthUser) {
      return user;
    }

    @Get('finance')
    @Auth('finance')
    finance(@CurrentUser() user: AuthUser) {
      return { reader: user.id };
    }
  }

  /** Stands in for the application's problem+json filter: only the status and detail matter here. */
  @Catch(DomainError)
  class StatusFilter implements ExceptionFilter {
    catch(error: DomainError, host: ArgumentsHost) {
      void host
        .switchToHttp()
        .getResponse<FastifyReply>()
        .status(error.status)
        .headers(error.headers)
        .send({ code: error.code, detail: error.detail });
    }
  }

  @Controller('team')
  @Auth('finance')
  class TeamController {
    @Get('report')
    report() {
      return {};
    }

    @Get('admin')
    @Auth('admin')
    admin() {
      return {};
    }
  }

  @Controller('open')
  class OpenController {
    @Get()
    open() {
      return {};
    }
  }

  @Module({ imports: [configModuleFor(config), AuthModule], controllers: [ProbeController, TeamController, OpenController] })
  class ProbeModule {}

  let app: NestFastifyApplication;
  /** What each route's Fastify config says of its roles, as the HTTP layer's onRequest hook reads it. */
  const routeRoles = new Map<string, unknown>();

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ProbeModule] }).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
    app.useGlobalFilters(new StatusFilter());
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onRequest', (request, _reply, done) => {
        routeRoles.set(request.url, (request.routeOptions.config as unknown as Record<string, unknown>)[AUTH_ROUTE_CONFIG_KEY]);
        done();
      });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  afterAll(async () => {
    await app.close();
  });

  const get = async (url: string, token?: string) => {
    const response = await app.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: response.statusCode, body: response.json(), headers: response.headers };
  };

  it('hands the verified caller to @CurrentUser()', async () => {
    await expect(get('/probe/me', await tokenFor(['customer'], 'erin'))).resolves.toMatchObject({
      status: 200,
      body: { id: 'erin', roles: ['customer'] },
    });
  });

  it('answers 401 without a token and 403 for a missing role', async () => {
    const anonymous = await get('/probe/me');
    expect(anonymous).toMatchObject({ status: 401, body: { code: 'unauthenticated', detail: 'Missing bearer token' } });
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
    await expect(get('/probe/finance', await tokenFor(['customer']))).resolves.toMatchObject({ status: 403, body: { code: 'forbidden' } });
    await expect(get('/probe/finance', await tokenFor(['admin'], 'root'))).resolves.toMatchObject({
      status: 200,
      body: { reader: 'root' },
    });
  });

  it("puts the roles in each route's Fastify config, the handler's over the controller's", async () => {
    const token = await tokenFor(['admin']);
    for (const url of ['/probe/me', '/probe/finance', '/team/report', '/team/admin', '/open']) await get(url, token);
    expect(Object.fromEntries(routeRoles)).toEqual({
      '/probe/me': [],
      '/probe/finance': ['finance'],
      '/team/report': ['finance'],
      '/team/admin': ['admin'],
      '/open': undefined,
    });
    await expect(get('/team/admin', await tokenFor(['finance']))).resolves.toMatchObject({ status: 403 });
  });

  it('documents the bearer security and the 401/403 answers for Swagger', () => {
    const document = SwaggerModule.createDocument(
      app,
      new DocumentBuilder().addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer').build(),
    );
    const finance = document.paths['/probe/finance'].get!;
    expect(finance.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(finance.responses)).toEqual(expect.arrayContaining(['401', '403']));
    expect(Object.keys(document.paths['/probe/me'].get!.responses)).not.toContain('403');
  });
});
