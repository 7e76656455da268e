import { loadAppConfig } from './app-config';
import { PRODUCTION_ENV as COMPLETE_PRODUCTION_ENV, problemsOf } from './app-config.spec-support';

/** Production without a verifier of its own: each test names the identity provider. */
const { AUTH_JWT_SECRET: _withoutSecret, ...PRODUCTION_ENV } = COMPLETE_PRODUCTION_ENV;
const KEYCLOAK = 'https://sso.merchant.example/realms/acme';

describe('the OpenID Connect settings', () => {
  it('AUTH_OIDC_ISSUER alone is a complete verifier in production: no HS256 secret is made up', () => {
    const config = loadAppConfig({
      ...PRODUCTION_ENV,
      AUTH_OIDC_ISSUER: KEYCLOAK,
      AUTH_OIDC_SWAGGER_CLIENT_ID: 'payments-swagger',
      AUTH_ROLES_CLAIM: 'realm_access.roles',
    });
    expect(config.auth).toMatchObject({
      jwtSecret: undefined,
      rolesClaim: 'realm_access.roles',
      oidc: { issuer: KEYCLOAK, swaggerClientId: 'payments-swagger', swaggerScopes: ['openid'] },
    });
    expect(loadAppConfig({ AUTH_OIDC_ISSUER: KEYCLOAK }).auth.jwtSecret).toBeUndefined();
  });

  it('keeps the issuer exactly as written: a trailing slash is part of `iss`', () => {
    expect(loadAppConfig({ AUTH_OIDC_ISSUER: 'https://acme.eu.auth0.com/' }).auth.oidc?.issuer).toBe('https://acme.eu.auth0.com/');
  });

  it('reads roles from `roles` unless AUTH_ROLES_CLAIM says otherwise', () => {
    expect(loadAppConfig({}).auth.rolesClaim).toBe('roles');
    expect(loadAppConfig({ AUTH_OIDC_ISSUER: KEYCLOAK }).auth.rolesClaim).toBe('roles');
  });

  it('refuses an http:// issuer except on a loopback address, in every environment, naming the variable', () => {
    for (const env of [{ ...PRODUCTION_ENV }, {}]) {
      const [problem] = problemsOf({ ...env, AUTH_OIDC_ISSUER: 'http://sso.merchant.example/realms/acme' });
      expect(problem).toMatch(/^AUTH_OIDC_ISSUER must be an https:\/\/ URL: http:\/\/ is accepted on a loopback address only/);
      expect(problemsOf({ ...env, AUTH_OIDC_ISSUER: 'http://192.0.2.2:8080/realms/acme' })).toHaveLength(1);
    }
    for (const issuer of ['http://127.0.0.1:8080/realms/acme', 'http://localhost:8080', 'http://[::1]:9000/']) {
      expect(loadAppConfig({ ...PRODUCTION_ENV, AUTH_OIDC_ISSUER: issuer }).auth.oidc?.issuer).toBe(issuer);
    }
  });

  it('refuses an issuer that is not a plain URL', () => {
    for (const issuer of [
      'sso.merchant.example',
      'ftp://sso.merchant.example',
      'https://u:p@sso.example',
      'https://sso.example/?realm=a',
    ]) {
      expect(problemsOf({ AUTH_OIDC_ISSUER: issuer })).toEqual([expect.stringMatching(/^AUTH_OIDC_ISSUER must be/)]);
    }
  });

  it('refuses AUTH_JWKS_URL with AUTH_OIDC_ISSUER, and an AUTH_JWT_ISSUER that names another issuer', () => {
    expect(problemsOf({ AUTH_OIDC_ISSUER: KEYCLOAK, AUTH_JWKS_URL: `${KEYCLOAK}/protocol/openid-connect/certs` })).toEqual([
      expect.stringMatching(/^AUTH_JWKS_URL and AUTH_OIDC_ISSUER are both set/),
    ]);
    expect(problemsOf({ AUTH_OIDC_ISSUER: KEYCLOAK, AUTH_JWT_ISSUER: 'https://other.example' })).toEqual([
      expect.stringMatching(/^AUTH_JWT_ISSUER differs from AUTH_OIDC_ISSUER/),
    ]);
    expect(problemsOf({ AUTH_OIDC_ISSUER: KEYCLOAK, AUTH_JWT_ISSUER: KEYCLOAK })).toEqual([]);
  });

  it('refuses a Swagger UI client id without an issuer to sign in at; the settings with defaults are unused then', () => {
    expect(problemsOf({ AUTH_OIDC_SWAGGER_CLIENT_ID: 'swagger', AUTH_OIDC_SWAGGER_SCOPES: 'openid', AUTH_ROLES_CLAIM: 'roles' })).toEqual([
      expect.stringMatching(/^AUTH_OIDC_SWAGGER_CLIENT_ID signs in at AUTH_OIDC_ISSUER/),
    ]);
  });

  it('validates the roles path, the client id and the scopes', () => {
    const base = { AUTH_OIDC_ISSUER: KEYCLOAK };
    for (const path of ['realm_access..roles', '.roles', 'roles.', 'realm access.roles'])
      expect(problemsOf({ ...base, AUTH_ROLES_CLAIM: path })).toEqual([expect.stringMatching(/^AUTH_ROLES_CLAIM must be/)]);
    expect(problemsOf({ ...base, AUTH_OIDC_SWAGGER_CLIENT_ID: 'a b' })).toEqual([
      expect.stringMatching(/^AUTH_OIDC_SWAGGER_CLIENT_ID must be/),
    ]);
    expect(problemsOf({ ...base, AUTH_OIDC_SWAGGER_SCOPES: 'openid "x"' })).toEqual([
      expect.stringMatching(/^AUTH_OIDC_SWAGGER_SCOPES must be/),
    ]);
    expect(
      loadAppConfig({ ...base, AUTH_OIDC_SWAGGER_SCOPES: ' openid  api://payments/access_as_user ' }).auth.oidc?.swaggerScopes,
    ).toEqual(['openid', 'api://payments/access_as_user']);
  });
});
