import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigService } from '@nestjs/config';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { loadAppConfig, type AppConfig } from '../config/app-config';
import { IdentityProviderUnavailableError } from './identity-provider-unavailable';
import { JwtVerifier } from './jwt-verifier.service';
import { DISCOVERY_DOCUMENT_MAX_BYTES } from './oidc-discovery';
import { OidcIssuer } from './oidc-issuer.service';
import { KEY_SET_MAX_BYTES } from './remote-key-set';

/** What a hostile or broken identity provider offers: 64 MiB, far past either bound. */
const OFFERED_BYTES = 64 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x20);
/** Memory growth allowed while the service reads such an answer: the bound, the socket buffers, noise. */
const ALLOWED_GROWTH_BYTES = 24 * 1024 * 1024;

const now = () => Math.floor(Date.now() / 1000);

/** Memory that a download can fill: the JS heap and the buffers outside it. */
const memoryInUse = () => {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers + usage.external;
};

/** Runs `work` while sampling memory every few milliseconds: the peak growth over the start. */
async function peakGrowthDuring(work: () => Promise<unknown>): Promise<number> {
  const start = memoryInUse();
  let peak = start;
  const sampler = setInterval(() => (peak = Math.max(peak, memoryInUse())), 2);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return Math.max(peak, memoryInUse()) - start;
}

/**
 * A JSON-looking answer of OFFERED_BYTES (`{"keys":[` then spaces), written as fast as the reader
 * takes it, chunked (no length announced, so only a bound while streaming can stop it) or with its
 * Content-Length. `written` counts what the reader took before it hung up.
 */
function offerHugeAnswer(response: ServerResponse, withLength: boolean, sent: { written: number }) {
  response.writeHead(200, { 'content-type': 'application/json', ...(withLength ? { 'content-length': String(OFFERED_BYTES) } : {}) });
  response.write('{"keys":[');
  sent.written = 0;
  const pump = () => {
    while (!response.destroyed && sent.written < OFFERED_BYTES - 9) {
      sent.written += CHUNK.length;
      if (!response.write(CHUNK)) return void response.once('drain', pump);
    }
    if (!response.destroyed) response.end();
  };
  pump();
}

describe('what the identity provider sends is bounded while it streams', () => {
  let server: Server;
  let base: string;
  let signingKey: CryptoKey;
  let publicJwk: Record<string, unknown>;
  /** Per path: 'huge' (chunked), 'huge-declared' (with Content-Length), or a JSON document. */
  const routes = new Map<string, 'huge' | 'huge-declared' | (() => unknown)>();
  const sent = { written: 0 };

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    signingKey = pair.privateKey;
    publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    server = createServer((request, response) => {
      response.on('error', () => undefined);
      const route = routes.get(request.url ?? '');
      if (route === undefined) return void response.writeHead(404).end();
      if (route === 'huge' || route === 'huge-declared') return offerHugeAnswer(response, route === 'huge-declared', sent);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(route()));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const sign = (iss?: string) =>
    new SignJWT({ sub: 'fiona', exp: now() + 60, ...(iss ? { iss } : {}) })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .sign(signingKey);
  const verifierOf = (auth: Partial<AppConfig['auth']>, oidc?: OidcIssuer) =>
    new JwtVerifier(new ConfigService<AppConfig, true>({ ...loadAppConfig({}), auth }), oidc);

  it.each(['huge', 'huge-declared'] as const)(
    'AUTH_JWKS_URL answering 64 MiB (%s): the download is cut at 256 KiB, the token is a 503, memory does not follow',
    async (mode) => {
      routes.set('/jwks.json', mode);
      const verifier = verifierOf({ jwksUrl: `${base}/jwks.json` });
      const token = await sign();
      let outcome: unknown;
      const growth = await peakGrowthDuring(async () => (outcome = await verifier.verify(token).catch((e: unknown) => e)));
      expect(outcome).toBeInstanceOf(IdentityProviderUnavailableError);
      expect(growth).toBeLessThan(ALLOWED_GROWTH_BYTES);
      // The reader hung up: the provider could not hand over what it offered.
      expect(sent.written).toBeLessThan(OFFERED_BYTES / 4);
      expect(KEY_SET_MAX_BYTES).toBe(256 * 1024);

      // The same URL serving a real key set again: the next token is verified (the failure was not kept).
      routes.set('/jwks.json', () => ({ keys: [publicJwk] }));
      await expect(verifier.verify(await sign())).resolves.toMatchObject({ id: 'fiona' });
    },
  );

  it('a discovery document of 64 MiB: discovery fails (503 for tokens meanwhile), memory does not follow', async () => {
    const issuer = `${base}/realms/huge`;
    routes.set('/realms/huge/.well-known/openid-configuration', 'huge');
    const config = new ConfigService<AppConfig, true>(loadAppConfig({ AUTH_OIDC_ISSUER: issuer }));
    const oidc = new OidcIssuer(config);
    const growth = await peakGrowthDuring(() => oidc.onModuleInit());
    expect(oidc.current()).toBeUndefined();
    expect(growth).toBeLessThan(ALLOWED_GROWTH_BYTES);
    expect(sent.written).toBeLessThan(OFFERED_BYTES / 4);
    expect(DISCOVERY_DOCUMENT_MAX_BYTES).toBe(256 * 1024);
    const refusal = await verifierOf(config.get('auth', { infer: true }), oidc)
      .verify(await sign(issuer))
      .catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(IdentityProviderUnavailableError);
  });

  it("the discovered provider's key set of 64 MiB: cut the same way, the token is a 503", async () => {
    const issuer = `${base}/realms/acme`;
    routes.set('/realms/acme/.well-known/openid-configuration', () => ({
      issuer,
      jwks_uri: `${issuer}/certs`,
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
    }));
    routes.set('/realms/acme/certs', 'huge');
    const config = new ConfigService<AppConfig, true>(loadAppConfig({ AUTH_OIDC_ISSUER: issuer }));
    const oidc = new OidcIssuer(config);
    await oidc.onModuleInit();
    expect(oidc.current()).toMatchObject({ jwksUri: `${issuer}/certs` });
    const verifier = verifierOf(config.get('auth', { infer: true }), oidc);
    const token = await sign(issuer);
    let outcome: unknown;
    const growth = await peakGrowthDuring(async () => (outcome = await verifier.verify(token).catch((e: unknown) => e)));
    expect(outcome).toBeInstanceOf(IdentityProviderUnavailableError);
    expect(growth).toBeLessThan(ALLOWED_GROWTH_BYTES);
    expect(sent.written).toBeLessThan(OFFERED_BYTES / 4);
  });
});
