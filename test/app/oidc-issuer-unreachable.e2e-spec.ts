import { generateKeyPair, SignJWT } from 'jose';
import request from 'supertest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { freePort, startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** The company's OpenID Connect provider is down: the service starts and serves, and its tokens are answered 503, not 401. */
describe('an unreachable OpenID Connect provider', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let issuer: string;

  beforeAll(async () => {
    // A port nothing listens on: every discovery attempt is refused at once.
    issuer = `http://127.0.0.1:${await freePort()}/realms/acme`;
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, { AUTH_OIDC_ISSUER: issuer, AUTH_OIDC_SWAGGER_CLIENT_ID: 'payments-swagger' });
  });

  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  it('starts anyway, with a warning, and serves what does not need the provider', async () => {
    expect(service.logs.entries().some((entry) => String(entry.msg).startsWith('OpenID Connect provider unreachable at start-up'))).toBe(
      true,
    );
    await request(service.server).get('/health/live').expect(200);
    // Swagger UI still offers the pasted token; the sign-in appears once the provider answers.
    const document = await request(service.server).get('/docs/finance-json').expect(200);
    expect(Object.keys(document.body.components.securitySchemes)).toEqual(['bearer']);
  });

  it("answers a request with one of the provider's tokens 503 identity_provider_unavailable (problem+json, Retry-After), not 401", async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const token = await new SignJWT({ sub: 'fiona', realm_access: { roles: ['finance'] } })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(issuer)
      .setExpirationTime('5m')
      .sign(privateKey);
    const answer = await request(service.server).get('/v1/orders').auth(token, { type: 'bearer' });
    expect(answer.status).toBe(503);
    expect(answer.headers['content-type']).toContain('application/problem+json');
    expect(answer.headers['retry-after']).toBe('5');
    expect(answer.body).toMatchObject({ status: 503, code: 'identity_provider_unavailable' });
    expect(JSON.stringify(answer.body)).not.toContain('127.0.0.1');
  });
});
