import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { UnauthenticatedError } from '../common/domain-error';
import { IdentityProviderUnavailableError } from './identity-provider-unavailable';
import { JwtVerifier, TOKEN_MESSAGES } from './jwt-verifier.service';
import type { AppConfig } from '../config/app-config';
import { configWith, hs256, now, rawHs256, rejection, SECRET } from './jwt-tokens.spec-support';

describe('JwtVerifier with an HS256 secret', () => {
  const verifier = new JwtVerifier(configWith({ jwtSecret: SECRET }));

  it('verifies HS256 tokens without WebCrypto (no key import, no asynchronous job per token)', async () => {
    const importKey = jest.spyOn(crypto.subtle, 'importKey');
    const subtleVerify = jest.spyOn(crypto.subtle, 'verify');
    try {
      const tokens = await Promise.all(['a', 'b', 'c'].map((sub) => hs256({ sub, exp: now() + 60 })));
      importKey.mockClear();
      const verifier = new JwtVerifier(configWith({ jwtSecret: SECRET }));
      for (const [i, sub] of ['a', 'b', 'c'].entries()) await expect(verifier.verify(tokens[i])).resolves.toMatchObject({ id: sub });
      expect(importKey).not.toHaveBeenCalled();
      expect(subtleVerify).not.toHaveBeenCalled();
    } finally {
      importKey.mockRestore();
      subtleVerify.mockRestore();
    }
  });

  it('accepts a valid token and reads sub and roles', async () => {
    const token = await hs256({ sub: 'alice', roles: ['finance'], exp: now() + 60 });
    await expect(verifier.verify(token)).resolves.toEqual({ id: 'alice', roles: ['finance'] });
  });

  it('gives the customer role when the claim is absent or empty', async () => {
    await expect(verifier.verify(await hs256({ sub: 'bob', exp: now() + 60 }))).resolves.toEqual({ id: 'bob', roles: ['customer'] });
    await expect(verifier.verify(await hs256({ sub: 'bob', roles: [], exp: now() + 60 }))).resolves.toEqual({
      id: 'bob',
      roles: ['customer'],
    });
  });

  it('accepts tokens signed with a previous secret (AUTH_JWT_PREVIOUS_SECRETS) while it is listed', async () => {
    const previous = 'previous-secret-of-at-least-thirty-two-characters';
    const oldToken = await hs256({ sub: 'carol', exp: now() + 60 }, previous);
    const rotated = new JwtVerifier(
      configWith({ jwtSecret: 'current-secret-of-at-least-thirty-two-chars', jwtPreviousSecrets: [previous] }),
    );
    await expect(rotated.verify(oldToken)).resolves.toMatchObject({ id: 'carol' });
    const dropped = new JwtVerifier(configWith({ jwtSecret: 'current-secret-of-at-least-thirty-two-chars', jwtPreviousSecrets: [] }));
    expect((await rejection(dropped.verify(oldToken))).detail).toBe(TOKEN_MESSAGES.invalid);
  });

  it('refuses an expired token, but tolerates 30 s of clock skew', async () => {
    const expired = await rejection(verifier.verify(await hs256({ sub: 'alice', exp: now() - 120 })));
    expect(expired.detail).toBe(TOKEN_MESSAGES.expired);
    expect(expired.status).toBe(401);
    expect(expired.code).toBe('unauthenticated');
    await expect(verifier.verify(await hs256({ sub: 'alice', exp: now() - 10 }))).resolves.toMatchObject({ id: 'alice' });
  });

  it('refuses a token signed with another secret', async () => {
    const error = await rejection(
      verifier.verify(await hs256({ sub: 'alice', exp: now() + 60 }, 'another-secret-of-at-least-thirty-two-chars')),
    );
    expect(error.detail).toBe(TOKEN_MESSAGES.invalid);
  });

  it('refuses an unsigned (alg none) token', async () => {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const unsigned = `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ sub: 'mallory', roles: ['admin'], exp: now() + 60 })}.`;
    expect((await rejection(verifier.verify(unsigned))).detail).toBe(TOKEN_MESSAGES.invalid);
  });

  it('refuses a token without sub, with an empty sub, or without exp', async () => {
    expect((await rejection(verifier.verify(await hs256({ roles: ['customer'], exp: now() + 60 })))).detail).toBe(TOKEN_MESSAGES.invalid);
    expect((await rejection(verifier.verify(await hs256({ sub: ' ', exp: now() + 60 })))).detail).toMatch(
      /"sub" must be a non-empty string/,
    );
    expect((await rejection(verifier.verify(await hs256({ sub: 'alice' })))).detail).toBe(TOKEN_MESSAGES.invalid);
  });

  it('refuses an unknown role or a roles claim that is not a list', async () => {
    const unknownRole = await rejection(verifier.verify(await hs256({ sub: 'alice', roles: ['customer', 'superuser'], exp: now() + 60 })));
    expect(unknownRole.detail).toBe('The bearer token is invalid: "roles" must be a list of customer, finance, admin');
    await rejection(verifier.verify(await hs256({ sub: 'alice', roles: 'admin', exp: now() + 60 })));
  });

  it('refuses a missing or malformed token', async () => {
    expect((await rejection(verifier.verify(undefined))).detail).toBe(TOKEN_MESSAGES.missing);
    expect((await rejection(verifier.verify('not-a-jwt'))).detail).toBe(TOKEN_MESSAGES.invalid);
  });

  it('refuses an RS256 token when no key set is configured', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    const token = await new SignJWT({ sub: 'alice', exp: now() + 60 }).setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
    expect((await rejection(verifier.verify(token))).detail).toBe(TOKEN_MESSAGES.invalid);
  });

  it('cannot be built without a secret or a key set', () => {
    expect(() => new JwtVerifier(configWith({}))).toThrow(/jwtSecret or config.auth.jwksUrl/);
  });
});

describe('JwtVerifier with a remote key set (JWKS)', () => {
  let server: Server;
  let jwksUrl: string;
  let rsaKey: CryptoKey;
  let ecKey: CryptoKey;
  let jwksRequests = 0;

  beforeAll(async () => {
    const rsa = await generateKeyPair('RS256');
    const ec = await generateKeyPair('ES256');
    rsaKey = rsa.privateKey;
    ecKey = ec.privateKey;
    const keys = [
      { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
      { ...(await exportJWK(ec.publicKey)), kid: 'ec-1', alg: 'ES256', use: 'sig' },
    ];
    server = createServer((request, response) => {
      if (request.url !== '/.well-known/jwks.json') {
        response.writeHead(404).end();
        return;
      }
      jwksRequests += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const sign = (key: CryptoKey, alg: string, kid: string, payload: JWTPayload) =>
    new SignJWT(payload).setProtectedHeader({ alg, kid }).sign(key);

  it('accepts RS256 and ES256 tokens signed with a published key, fetching the key set once', async () => {
    const verifier = new JwtVerifier(configWith({ jwksUrl }));
    const before = jwksRequests;
    await expect(
      verifier.verify(await sign(rsaKey, 'RS256', 'rsa-1', { sub: 'carol', roles: ['admin'], exp: now() + 60 })),
    ).resolves.toEqual({ id: 'carol', roles: ['admin'] });
    await expect(verifier.verify(await sign(ecKey, 'ES256', 'ec-1', { sub: 'dave', exp: now() + 60 }))).resolves.toEqual({
      id: 'dave',
      roles: ['customer'],
    });
    expect(jwksRequests - before).toBe(1);
  });

  it('refuses a token signed with a key the identity provider did not publish', async () => {
    const verifier = new JwtVerifier(configWith({ jwksUrl }));
    const { privateKey } = await generateKeyPair('RS256');
    const error = await rejection(verifier.verify(await sign(privateKey, 'RS256', 'rsa-1', { sub: 'carol', exp: now() + 60 })));
    expect(error.detail).toBe(TOKEN_MESSAGES.invalid);
  });

  it('refuses an expired RS256 token and an HS256 token when only a key set is configured', async () => {
    const verifier = new JwtVerifier(configWith({ jwksUrl }));
    expect((await rejection(verifier.verify(await sign(rsaKey, 'RS256', 'rsa-1', { sub: 'carol', exp: now() - 120 })))).detail).toBe(
      TOKEN_MESSAGES.expired,
    );
    expect(await rejection(verifier.verify(await hs256({ sub: 'carol', exp: now() + 60 })))).toBeInstanceOf(UnauthenticatedError);
  });

  it('accepts either kind of token when both a secret and a key set are configured', async () => {
    const verifier = new JwtVerifier(configWith({ jwtSecret: SECRET, jwksUrl }));
    await expect(verifier.verify(await hs256({ sub: 'alice', exp: now() + 60 }))).resolves.toMatchObject({ id: 'alice' });
    await expect(verifier.verify(await sign(rsaKey, 'RS256', 'rsa-1', { sub: 'carol', exp: now() + 60 }))).resolves.toMatchObject({
      id: 'carol',
    });
  });

  describe.each([
    ['HS256', () => (payload: JWTPayload) => hs256(payload)],
    ['RS256 (JWKS)', () => (payload: JWTPayload) => sign(rsaKey, 'RS256', 'rsa-1', payload)],
  ])('claim rules on %s tokens', (_name, signer) => {
    const DAY = 86400;
    const verifierWith = (auth: Partial<AppConfig['auth']> = {}) => new JwtVerifier(configWith({ jwtSecret: SECRET, jwksUrl, ...auth }));
    const refused = async (verifier: JwtVerifier, payload: JWTPayload) => {
      const error = await rejection(verifier.verify(await signer()(payload)));
      expect(error.status).toBe(401);
      expect(error.detail.startsWith(TOKEN_MESSAGES.invalid)).toBe(true);
      return error;
    };

    it('AUTH_JWT_ISSUER: `iss` must equal it; unset, not checked', async () => {
      const verifier = verifierWith({ issuer: 'https://idp.example.com/' });
      await expect(verifier.verify(await signer()({ sub: 'a', iss: 'https://idp.example.com/', exp: now() + 60 }))).resolves.toMatchObject({
        id: 'a',
      });
      await refused(verifier, { sub: 'a', iss: 'https://evil.example.com/', exp: now() + 60 });
      await refused(verifier, { sub: 'a', exp: now() + 60 });
      await expect(verifierWith().verify(await signer()({ sub: 'a', iss: 'anyone', exp: now() + 60 }))).resolves.toMatchObject({ id: 'a' });
    });

    it('AUTH_JWT_AUDIENCE: `aud` must name it, as a string or in a list', async () => {
      const verifier = verifierWith({ audience: 'payments-bff' });
      for (const aud of ['payments-bff', ['other', 'payments-bff']]) {
        await expect(verifier.verify(await signer()({ sub: 'a', aud, exp: now() + 60 }))).resolves.toMatchObject({ id: 'a' });
      }
      for (const aud of ['other', ['other'], [], 'payments-bff-x']) await refused(verifier, { sub: 'a', aud, exp: now() + 60 });
      await refused(verifier, { sub: 'a', exp: now() + 60 });
    });

    it('AUTH_MAX_TOKEN_TTL (default 30 days): refuses a longer `exp` − `iat` or `exp` − now', async () => {
      const verifier = verifierWith();
      const t = now();
      await expect(verifier.verify(await signer()({ sub: 'a', iat: t, exp: t + 30 * DAY }))).resolves.toMatchObject({ id: 'a' });
      await refused(verifier, { sub: 'a', iat: t, exp: t + 30 * DAY + 1 });
      // Issued long ago, still valid today: its lifetime is what counts.
      await refused(verifier, { sub: 'a', iat: t - 40 * DAY, exp: t + 60 });
      // Without `iat`, judged by what is left of it.
      await expect(verifier.verify(await signer()({ sub: 'a', exp: t + 29 * DAY }))).resolves.toMatchObject({ id: 'a' });
      await refused(verifier, { sub: 'a', exp: t + 31 * DAY });
      // An `iat` in the future does not stretch the lifetime.
      await refused(verifier, { sub: 'a', iat: t + 10 * DAY, exp: t + 35 * DAY });
      await refused(verifier, { sub: 'a', iat: t, exp: 1e308 });
      await refused(verifier, { sub: 'a', exp: 1e308 });
    });

    it('AUTH_MAX_TOKEN_TTL set lower applies', async () => {
      const verifier = verifierWith({ maxTokenTtlSeconds: 3600 });
      const t = now();
      await expect(verifier.verify(await signer()({ sub: 'a', iat: t, exp: t + 3600 }))).resolves.toMatchObject({ id: 'a' });
      await refused(verifier, { sub: 'a', iat: t, exp: t + 7200 });
      await refused(verifier, { sub: 'a', exp: t + 7200 });
    });
  });

  it('refuses an `exp` that JSON reads as Infinity (1e309) instead of overflowing', async () => {
    const verifier = new JwtVerifier(configWith({ jwtSecret: SECRET }));
    await rejection(verifier.verify(rawHs256('{"sub":"a","exp":1e309}')));
    await rejection(verifier.verify(rawHs256(`{"sub":"a","iat":${now()},"exp":1e308}`)));
    await expect(verifier.verify(rawHs256(`{"sub":"a","iat":${now()},"exp":${now() + 60}}`))).resolves.toMatchObject({ id: 'a' });
  });

  it('carries the `email` claim and whether it is verified (the boolean true only)', async () => {
    const verifier = new JwtVerifier(configWith({ jwtSecret: SECRET }));
    const user = (claims: JWTPayload) => hs256({ sub: 'a', exp: now() + 60, ...claims }).then((token) => verifier.verify(token));
    await expect(user({ email: 'Awa@Example.com', email_verified: true })).resolves.toEqual({
      id: 'a',
      roles: ['customer'],
      email: 'Awa@Example.com',
      emailVerified: true,
    });
    await expect(user({ email: 'awa@example.com', email_verified: 'true' })).resolves.toMatchObject({ emailVerified: false });
    await expect(user({ email: 'awa@example.com' })).resolves.toMatchObject({ emailVerified: false });
    const none = await user({ email_verified: true });
    expect(none.email).toBeUndefined();
    expect(none.emailVerified).toBeUndefined();
  });

  it('answers 503 identity_provider_unavailable, not 401, when the key set cannot be fetched', async () => {
    const verifier = new JwtVerifier(configWith({ jwksUrl: jwksUrl.replace('jwks.json', 'missing.json') }));
    const error = await verifier.verify(await sign(rsaKey, 'RS256', 'rsa-1', { sub: 'carol', exp: now() + 60 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdentityProviderUnavailableError);
    expect(error).toMatchObject({ status: 503, code: 'identity_provider_unavailable', headers: { 'retry-after': '5' } });
    expect((error as IdentityProviderUnavailableError).detail.startsWith(TOKEN_MESSAGES.keysUnavailable)).toBe(true);
    expect((error as IdentityProviderUnavailableError).detail).not.toContain('127.0.0.1');
  });
});
