import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigService } from '@nestjs/config';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { ConfigValidationError, loadAppConfig, type AppConfig } from '../config/app-config';
import { UnauthenticatedError } from '../common/domain-error';
import { IdentityProviderUnavailableError } from './identity-provider-unavailable';
import { JwtVerifier } from './jwt-verifier.service';
import { checkDiscoveryDocument, discoveryUrl, OidcDiscoveryRefused } from './oidc-discovery';
import { DISCOVERY_RETRY_INTERVAL_MS, OidcIssuer } from './oidc-issuer.service';

const ISSUER = 'https://sso.merchant.example/realms/acme';
const DOCUMENT = {
  issuer: ISSUER,
  jwks_uri: `${ISSUER}/protocol/openid-connect/certs`,
  authorization_endpoint: `${ISSUER}/protocol/openid-connect/auth`,
  token_endpoint: `${ISSUER}/protocol/openid-connect/token`,
};
const now = () => Math.floor(Date.now() / 1000);

describe('the discovery document', () => {
  it('is at the issuer + /.well-known/openid-configuration, a trailing slash of the issuer dropped', () => {
    expect(discoveryUrl(ISSUER)).toBe(`${ISSUER}/.well-known/openid-configuration`);
    expect(discoveryUrl('https://acme.eu.auth0.com/')).toBe('https://acme.eu.auth0.com/.well-known/openid-configuration');
  });

  it('gives the keys, authorization and token URLs of the configured issuer', () => {
    expect(checkDiscoveryDocument(ISSUER, DOCUMENT)).toEqual({
      issuer: ISSUER,
      jwksUri: DOCUMENT.jwks_uri,
      authorizationEndpoint: DOCUMENT.authorization_endpoint,
      tokenEndpoint: DOCUMENT.token_endpoint,
    });
  });

  it('is refused when it names another issuer, even one that differs by a trailing slash', () => {
    for (const issuer of ['https://evil.example/realms/acme', `${ISSUER}/`, undefined]) {
      expect(() => checkDiscoveryDocument(ISSUER, { ...DOCUMENT, issuer })).toThrow(OidcDiscoveryRefused);
    }
    expect(() => checkDiscoveryDocument(ISSUER, { ...DOCUMENT, issuer: 'https://evil.example' })).toThrow(/^AUTH_OIDC_ISSUER: /);
  });

  it('is refused when an endpoint is http:// off a loopback address, missing or not a URL', () => {
    expect(() => checkDiscoveryDocument(ISSUER, { ...DOCUMENT, jwks_uri: 'http://sso.merchant.example/certs' })).toThrow(
      /jwks_uri must be https:\/\//,
    );
    expect(() => checkDiscoveryDocument(ISSUER, { ...DOCUMENT, token_endpoint: 'http://192.0.2.2/token' })).toThrow(OidcDiscoveryRefused);
    expect(() => checkDiscoveryDocument(ISSUER, { ...DOCUMENT, jwks_uri: undefined })).toThrow(/has no jwks_uri/);
    expect(() => checkDiscoveryDocument(ISSUER, { ...DOCUMENT, authorization_endpoint: 'auth' })).toThrow(/not an absolute URL/);
    expect(() => checkDiscoveryDocument(ISSUER, [DOCUMENT])).toThrow(/not a JSON object/);
  });

  it('may use http:// endpoints on a loopback address, like its issuer', () => {
    const local = 'http://127.0.0.1:8080/realms/acme';
    expect(
      checkDiscoveryDocument(local, {
        issuer: local,
        jwks_uri: `${local}/certs`,
        authorization_endpoint: `${local}/auth`,
        token_endpoint: `${local}/token`,
      }),
    ).toMatchObject({ jwksUri: `${local}/certs` });
  });
});

/** A local OpenID Connect provider: a discovery document and its keys, over HTTP on 127.0.0.1. */
describe('tokens of the OpenID Connect provider (AUTH_OIDC_ISSUER)', () => {
  let server: Server;
  let issuer: string;
  let signingKey: CryptoKey;
  let document: Record<string, unknown>;
  let up = true;
  let discoveries = 0;

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    signingKey = pair.privateKey;
    const keys = [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }];
    server = createServer((request, response) => {
      if (!up) return response.destroy();
      if (request.url === '/realms/acme/.well-known/openid-configuration') {
        discoveries += 1;
        return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
      }
      if (request.url === '/realms/acme/certs')
        return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/realms/acme`;
  });

  beforeEach(() => {
    up = true;
    document = { issuer, jwks_uri: `${issuer}/certs`, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token` };
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const configFor = (env: Record<string, string> = {}) =>
    new ConfigService<AppConfig, true>(loadAppConfig({ AUTH_OIDC_ISSUER: issuer, AUTH_ROLES_CLAIM: 'realm_access.roles', ...env }));
  const started = async (env: Record<string, string> = {}) => {
    const config = configFor(env);
    const oidc = new OidcIssuer(config);
    await oidc.onModuleInit();
    return { oidc, verifier: new JwtVerifier(config, oidc) };
  };
  const sign = (payload: JWTPayload) => new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(signingKey);

  it('verifies with the keys found through discovery and reads the roles at AUTH_ROLES_CLAIM, ignoring unknown ones', async () => {
    const { verifier, oidc } = await started();
    expect(oidc.current()).toMatchObject({ authorizationEndpoint: `${issuer}/auth`, tokenEndpoint: `${issuer}/token` });
    const token = await sign({
      sub: 'fiona',
      iss: issuer,
      exp: now() + 60,
      realm_access: { roles: ['offline_access', 'finance', 'default-roles-acme'] },
      roles: ['admin'],
    });
    await expect(verifier.verify(token)).resolves.toEqual({ id: 'fiona', roles: ['finance'] });
  });

  it('refuses a token of the same keys that names another issuer, or none', async () => {
    const { verifier } = await started();
    for (const iss of ['https://other.example', `${issuer}/`, undefined]) {
      await expect(verifier.verify(await sign({ sub: 'fiona', iss, exp: now() + 60 }))).rejects.toBeInstanceOf(UnauthenticatedError);
    }
  });

  it('checks the audience when AUTH_JWT_AUDIENCE is set', async () => {
    const { verifier } = await started({ AUTH_JWT_AUDIENCE: 'payments-bff' });
    await expect(verifier.verify(await sign({ sub: 'f', iss: issuer, aud: 'payments-bff', exp: now() + 60 }))).resolves.toMatchObject({
      id: 'f',
    });
    await expect(verifier.verify(await sign({ sub: 'f', iss: issuer, aud: 'account', exp: now() + 60 }))).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
  });

  it('refuses a roles claim that is not a list, naming the path', async () => {
    const { verifier } = await started();
    const refusal = await verifier
      .verify(await sign({ sub: 'f', iss: issuer, exp: now() + 60, realm_access: { roles: 'finance' } }))
      .catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(UnauthenticatedError);
    expect((refusal as UnauthenticatedError).detail).toContain('"realm_access.roles" must be a list');
  });

  it("keeps reading `roles`, strictly, in the service's own HS256 tokens beside the provider's", async () => {
    const secret = 's'.repeat(40);
    const { verifier } = await started({ AUTH_JWT_SECRET: secret });
    const hs256 = (payload: JWTPayload) => new SignJWT(payload).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));
    await expect(verifier.verify(await hs256({ sub: 'ops', roles: ['admin'], exp: now() + 60 }))).resolves.toEqual({
      id: 'ops',
      roles: ['admin'],
    });
    await expect(verifier.verify(await hs256({ sub: 'ops', roles: ['admn'], exp: now() + 60 }))).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
  });

  it('stops the start (a configuration error naming AUTH_OIDC_ISSUER) when the document names another issuer', async () => {
    document = { ...document, issuer: 'https://evil.example' };
    const refused = await new OidcIssuer(configFor()).onModuleInit().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigValidationError);
    expect((refused as ConfigValidationError).problems).toEqual([
      expect.stringMatching(/^AUTH_OIDC_ISSUER: the discovery document names the issuer "https:\/\/evil.example"/),
    ]);
  });

  it('starts while the provider is unreachable, answers 503 (not 401) meanwhile, and discovers it later', async () => {
    up = false;
    const { verifier } = await started();
    const token = await sign({ sub: 'fiona', iss: issuer, exp: now() + 60, realm_access: { roles: ['finance'] } });
    const unavailable = await verifier.verify(token).catch((e: unknown) => e);
    expect(unavailable).toBeInstanceOf(IdentityProviderUnavailableError);
    expect(unavailable).toMatchObject({ status: 503, code: 'identity_provider_unavailable' });

    // Within the retry interval the provider is not asked again; after it, it is.
    up = true;
    const before = discoveries;
    await expect(verifier.verify(token)).rejects.toBeInstanceOf(IdentityProviderUnavailableError);
    expect(discoveries).toBe(before);
    const later = Date.now() + DISCOVERY_RETRY_INTERVAL_MS + 1;
    const clock = jest.spyOn(Date, 'now').mockReturnValue(later);
    try {
      await expect(verifier.verify(token)).resolves.toEqual({ id: 'fiona', roles: ['finance'] });
    } finally {
      clock.mockRestore();
    }
    expect(discoveries).toBe(before + 1);
  });
});
