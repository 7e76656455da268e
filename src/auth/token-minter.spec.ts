import { decodeJwt } from 'jose';
import { ConfigService } from '@nestjs/config';
import { loadAppConfig } from '../config/app-config';
import type { Role } from './auth.types';
import { JwtVerifier } from './jwt-verifier.service';
import { MAX_TTL_SECONDS, mintToken, parseTtl, TokenMintingError } from './token-minter';

const SECRET = 'minter-test-secret-of-at-least-thirty-two-chars';

describe('parseTtl', () => {
  it.each([
    ['45s', 45],
    ['30m', 1800],
    ['8h', 28800],
    ['2d', 172800],
    ['3600', 3600],
    [' 1h ', 3600],
  ])('reads %p as %p seconds', (text, seconds) => {
    expect(parseTtl(text)).toBe(seconds);
  });

  it.each(['', 'h', '8x', '1.5h', '-5m', '8 h', 'eight'])('refuses %p with the accepted forms', (text) => {
    expect(() => parseTtl(text)).toThrow(TokenMintingError);
    expect(() => parseTtl(text)).toThrow(/use a number followed by s, m, h or d/);
  });

  it('refuses zero and more than 30 days', () => {
    expect(() => parseTtl('0m')).toThrow('must be longer than zero');
    expect(() => parseTtl('31d')).toThrow('at most 30d');
    expect(parseTtl(`${MAX_TTL_SECONDS}`)).toBe(MAX_TTL_SECONDS);
  });
});

describe('mintToken', () => {
  const verifier = new JwtVerifier(new ConfigService({ ...loadAppConfig({}), auth: { jwtSecret: SECRET } }));

  it('mints an HS256 token the verifier accepts, expiring after the TTL', async () => {
    const token = await mintToken({ sub: 'alice', roles: ['finance', 'admin'], ttl: '8h', secret: SECRET });
    await expect(verifier.verify(token)).resolves.toEqual({ id: 'alice', roles: ['finance', 'admin'] });
    const claims = decodeJwt(token);
    expect(claims.exp! - claims.iat!).toBe(8 * 3600);
  });

  it('accepts a TTL in seconds', async () => {
    const claims = decodeJwt(await mintToken({ sub: 'alice', roles: ['customer'], ttl: 90, secret: SECRET }));
    expect(claims.exp! - claims.iat!).toBe(90);
  });

  it('sets iss and aud when given, so a verifier that requires them accepts the token', async () => {
    const strict = new JwtVerifier(
      new ConfigService({
        ...loadAppConfig({}),
        auth: { jwtSecret: SECRET, issuer: 'https://idp.example.com/', audience: 'payments-bff', maxTokenTtlSeconds: 3600 },
      }),
    );
    const plain = await mintToken({ sub: 'alice', roles: ['customer'], ttl: '1h', secret: SECRET });
    await expect(strict.verify(plain)).rejects.toThrow();
    const token = await mintToken({
      sub: 'alice',
      roles: ['customer'],
      ttl: '1h',
      secret: SECRET,
      issuer: 'https://idp.example.com/',
      audience: 'payments-bff',
      maxTtlSeconds: 3600,
    });
    await expect(strict.verify(token)).resolves.toMatchObject({ id: 'alice' });
    expect(decodeJwt(token)).toMatchObject({ iss: 'https://idp.example.com/', aud: 'payments-bff' });
  });

  it('refuses a TTL the service would refuse (AUTH_MAX_TOKEN_TTL)', async () => {
    await expect(mintToken({ sub: 'alice', roles: ['customer'], ttl: '2h', secret: SECRET, maxTtlSeconds: 3600 })).rejects.toThrow(
      'at most 3600s',
    );
    expect(() => parseTtl('2d', 86400)).toThrow('at most 1d');
  });

  it('sets email and email_verified when given', async () => {
    const token = await mintToken({
      sub: 'alice',
      roles: ['customer'],
      ttl: '1h',
      secret: SECRET,
      email: 'alice@example.com',
      emailVerified: true,
    });
    expect(decodeJwt(token)).toMatchObject({ email: 'alice@example.com', email_verified: true });
    await expect(verifier.verify(token)).resolves.toMatchObject({ email: 'alice@example.com', emailVerified: true });
  });

  it('refuses an empty subject, no roles, an unknown role or an empty secret', async () => {
    await expect(mintToken({ sub: ' ', roles: ['customer'], ttl: '1h', secret: SECRET })).rejects.toThrow('must not be empty');
    await expect(mintToken({ sub: 'alice', roles: [], ttl: '1h', secret: SECRET })).rejects.toThrow('At least one role');
    await expect(mintToken({ sub: 'alice', roles: ['root' as Role], ttl: '1h', secret: SECRET })).rejects.toThrow('Unknown role(s) root');
    await expect(mintToken({ sub: 'alice', roles: ['customer'], ttl: '1h', secret: '' })).rejects.toThrow('secret');
  });
});
