import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
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
  const verifier = new JwtVerifier({ ...loadAppConfig({}), auth: { jwtSecret: SECRET } });

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

  it('refuses an empty subject, no roles, an unknown role or an empty secret', async () => {
    await expect(mintToken({ sub: ' ', roles: ['customer'], ttl: '1h', secret: SECRET })).rejects.toThrow('must not be empty');
    await expect(mintToken({ sub: 'alice', roles: [], ttl: '1h', secret: SECRET })).rejects.toThrow('At least one role');
    await expect(mintToken({ sub: 'alice', roles: ['root' as Role], ttl: '1h', secret: SECRET })).rejects.toThrow('Unknown role(s) root');
    await expect(mintToken({ sub: 'alice', roles: ['customer'], ttl: '1h', secret: '' })).rejects.toThrow('secret');
  });
});

describe('npm run token (scripts/token.ts)', () => {
  const root = join(__dirname, '..', '..');
  // The development configuration: no AUTH_* and no NODE_ENV=production inherited from the runner.
  const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AUTH_') && name !== 'NODE_ENV'));
  const runCli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    spawnSync(process.execPath, ['-r', '@swc-node/register', 'scripts/token.ts', ...args], {
      cwd: root,
      env: { ...baseEnv, ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('prints only a token that the service accepts with the development secret', async () => {
    const result = runCli(['--sub', 'alice', '--roles', 'finance', '--ttl', '8h']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const verifier = new JwtVerifier(loadAppConfig({}));
    await expect(verifier.verify(result.stdout.trim())).resolves.toEqual({ id: 'alice', roles: ['finance'] });
  });

  it('defaults to the customer role', async () => {
    const result = runCli(['--sub', 'bob']);
    expect(result.status).toBe(0);
    await expect(new JwtVerifier(loadAppConfig({})).verify(result.stdout.trim())).resolves.toEqual({ id: 'bob', roles: ['customer'] });
  });

  it('exits 2 with a message on stderr for an unknown role or a missing --sub', () => {
    const badRoles = runCli(['--sub', 'alice', '--roles', 'finance,boss']);
    expect(badRoles.status).toBe(2);
    expect(badRoles.stdout).toBe('');
    expect(badRoles.stderr).toContain('unknown role(s) boss');
    const noSub = runCli(['--roles', 'finance']);
    expect(noSub.status).toBe(2);
    expect(noSub.stderr).toContain('--sub is required');
  });

  it('refuses to mint when only a JWKS URL is configured', () => {
    const result = runCli(['--sub', 'alice'], { AUTH_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json' });
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('identity provider');
  });
});
