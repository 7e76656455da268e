import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { loadAppConfig } from '../config/app-config';
import { SIGN_IN_SCHEME, signInConnectSources, swaggerSignIn, withSignIn } from './swagger-sign-in';

const METADATA = {
  issuer: 'https://sso.example.com/realms/acme',
  jwksUri: 'https://sso.example.com/realms/acme/certs',
  authorizationEndpoint: 'https://sso.example.com/realms/acme/auth',
  tokenEndpoint: 'https://sso.example.com/realms/acme/token',
};
const DOCUMENT = {
  openapi: '3.0.0',
  info: { title: 'x', version: '1' },
  paths: {
    '/v1/orders': { get: { security: [{ bearer: [] }], responses: {} }, parameters: [] },
    '/health/live': { get: { responses: {} } },
  },
  components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
} as unknown as OpenAPIObject;

describe('withSignIn', () => {
  it('declares the oauth2 scheme (authorization code, the discovered URLs) and offers it where the bearer token is taken', () => {
    const signedIn = withSignIn(DOCUMENT, METADATA);
    expect(signedIn.components?.securitySchemes).toEqual({
      bearer: { type: 'http', scheme: 'bearer' },
      [SIGN_IN_SCHEME]: expect.objectContaining({
        type: 'oauth2',
        flows: { authorizationCode: { authorizationUrl: METADATA.authorizationEndpoint, tokenUrl: METADATA.tokenEndpoint, scopes: {} } },
      }),
    });
    expect(signedIn.paths['/v1/orders'].get?.security).toEqual([{ bearer: [] }, { [SIGN_IN_SCHEME]: [] }]);
    expect(signedIn.paths['/health/live'].get?.security).toBeUndefined();
  });

  it('leaves the served document as it was (it is cached and patched per request)', () => {
    const before = structuredClone(DOCUMENT);
    withSignIn(DOCUMENT, METADATA);
    withSignIn(DOCUMENT, METADATA);
    expect(DOCUMENT).toEqual(before);
  });
});

describe('swaggerSignIn', () => {
  const app = (current = METADATA) =>
    ({ get: () => ({ current: () => current, metadata: () => Promise.resolve(current) }) }) as unknown as NestFastifyApplication;

  it('adds nothing without AUTH_OIDC_SWAGGER_CLIENT_ID', () => {
    expect(swaggerSignIn(app(), loadAppConfig({}))).toEqual({});
    expect(swaggerSignIn(app(), loadAppConfig({ AUTH_OIDC_ISSUER: METADATA.issuer }))).toEqual({});
    expect(signInConnectSources(loadAppConfig({ AUTH_OIDC_ISSUER: METADATA.issuer }))).toEqual([]);
  });

  it('signs in as the client with PKCE, back at PUBLIC_BASE_URL, and lets the page reach the provider', async () => {
    const config = loadAppConfig({
      PUBLIC_BASE_URL: 'http://192.0.2.2:3000',
      AUTH_OIDC_ISSUER: METADATA.issuer,
      AUTH_OIDC_SWAGGER_CLIENT_ID: 'payments-swagger',
      AUTH_OIDC_SWAGGER_SCOPES: 'openid profile',
    });
    const options = swaggerSignIn(app(), config);
    expect(options.swaggerOptions).toMatchObject({
      initOAuth: { clientId: 'payments-swagger', usePkceWithAuthorizationCodeGrant: true, scopes: ['openid', 'profile'] },
      oauth2RedirectUrl: 'http://192.0.2.2:3000/docs/oauth2-redirect.html',
    });
    const patched = await options.patchDocumentOnRequest!(undefined, undefined, DOCUMENT);
    expect(patched.components?.securitySchemes?.[SIGN_IN_SCHEME]).toBeDefined();
    // Made once per served document.
    await expect(options.patchDocumentOnRequest!(undefined, undefined, DOCUMENT)).resolves.toBe(patched);
    expect(signInConnectSources(config)).toEqual(['https://sso.example.com']);
  });
});
