import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { JwtVerifier, REMOTE_KEY_RECHECK_MS, TOKEN_MESSAGES, VERIFIED_TOKENS_KEPT } from './jwt-verifier.service';
import { verifyHs256 } from './hs256';
import { configWith, now, rawHs256, rejection, SECRET } from './jwt-tokens.spec-support';

// Counted, not replaced: how many tokens were verified in full.
jest.mock('./hs256', () => {
  const actual = jest.requireActual<typeof import('./hs256')>('./hs256');
  return { ...actual, verifyHs256: jest.fn(actual.verifyHs256) };
});
const fullVerifications = jest.mocked(verifyHs256);

describe('JwtVerifier remembers the tokens it verified', () => {
  afterEach(() => jest.restoreAllMocks());

  it('verifies a token once: the same bearer again is not verified again, and each caller gets its own copy', async () => {
    const verifier = new JwtVerifier(configWith({ jwtSecret: SECRET }));
    const token = rawHs256(JSON.stringify({ sub: 'alice', roles: ['finance'], exp: now() + 600 }));
    fullVerifications.mockClear();
    const first = await verifier.verify(token);
    first.roles.push('admin');
    await expect(verifier.verify(token)).resolves.toEqual({ id: 'alice', roles: ['finance'] });
    expect(fullVerifications).toHaveBeenCalledTimes(1);
    // One character of the signature changed is another token, verified (and refused) in full.
    const forged = token.slice(0, -2) + (token.endsWith('AA') ? 'AB' : 'AA');
    await rejection(verifier.verify(forged));
    expect(fullVerifications).toHaveBeenCalledTimes(2);
  });

  it('verifies a token of remote keys again after REMOTE_KEY_RECHECK_MS (published keys can be withdrawn)', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const keys = [{ ...(await exportJWK(publicKey)), kid: 'ec-recheck', alg: 'ES256', use: 'sig' }];
    const server = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys })),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const verifier = new JwtVerifier(configWith({ jwksUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks` }));
      const token = await new SignJWT({ sub: 'carol', exp: now() + 600 })
        .setProtectedHeader({ alg: 'ES256', kid: 'ec-recheck' })
        .sign(privateKey);
      const signatureChecks = jest.spyOn(crypto.subtle, 'verify');
      await verifier.verify(token);
      await verifier.verify(token);
      expect(signatureChecks).toHaveBeenCalledTimes(1);
      const later = Date.now() + REMOTE_KEY_RECHECK_MS + 1;
      jest.spyOn(Date, 'now').mockReturnValue(later);
      await expect(verifier.verify(token)).resolves.toMatchObject({ id: 'carol' });
      expect(signatureChecks).toHaveBeenCalledTimes(2);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a remembered token once it has expired', async () => {
    const verifier = new JwtVerifier(configWith({ jwtSecret: SECRET }));
    const exp = now() + 60;
    const token = rawHs256(JSON.stringify({ sub: 'alice', exp }));
    await expect(verifier.verify(token)).resolves.toMatchObject({ id: 'alice' });
    // Past exp and the clock tolerance (30 s).
    jest.spyOn(Date, 'now').mockReturnValue((exp + 31) * 1000);
    expect((await rejection(verifier.verify(token))).detail).toBe(TOKEN_MESSAGES.expired);
  });

  it('remembered: the caller of a verified token at once, a copy each time; nothing for an unknown or expired token', async () => {
    const verifier = new JwtVerifier(configWith({ jwtSecret: SECRET }));
    const exp = now() + 60;
    const token = rawHs256(JSON.stringify({ sub: 'alice', roles: ['finance'], exp }));
    expect(verifier.remembered(token)).toBeUndefined();
    await verifier.verify(token);
    const first = verifier.remembered(token)!;
    first.roles.push('admin');
    expect(verifier.remembered(token)).toEqual({ id: 'alice', roles: ['finance'] });
    // Up to exp plus the clock tolerance (30 s), and not a millisecond after it.
    jest.spyOn(Date, 'now').mockReturnValue((exp + 30) * 1000 - 1);
    expect(verifier.remembered(token)).toMatchObject({ id: 'alice' });
    jest.spyOn(Date, 'now').mockReturnValue((exp + 30) * 1000);
    expect(verifier.remembered(token)).toBeUndefined();
    expect((await rejection(verifier.verify(token))).detail).toBe(TOKEN_MESSAGES.expired);
  });

  it('keeps a bounded number of tokens: the oldest is verified again', async () => {
    const verifier = new JwtVerifier(configWith({ jwtSecret: SECRET }));
    const tokens = Array.from({ length: VERIFIED_TOKENS_KEPT + 1 }, (_, i) =>
      rawHs256(JSON.stringify({ sub: `user-${i}`, exp: now() + 600 })),
    );
    for (const token of tokens) await verifier.verify(token);
    fullVerifications.mockClear();
    await verifier.verify(tokens.at(-1));
    expect(fullVerifications).not.toHaveBeenCalled();
    await verifier.verify(tokens[0]);
    expect(fullVerifications).toHaveBeenCalledTimes(1);
  });
});
