import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ConfigService } from '@nestjs/config';
import { loadAppConfig } from '../../src/config/app-config';
import { JwtVerifier } from '../../src/auth/jwt-verifier.service';

/** The token CLI as a developer runs it: a child process of its own (kept out of the unit tier, which starts none). */
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
    const verifier = new JwtVerifier(new ConfigService(loadAppConfig({})));
    await expect(verifier.verify(result.stdout.trim())).resolves.toEqual({ id: 'alice', roles: ['finance'] });
  });

  it('defaults to the customer role', async () => {
    const result = runCli(['--sub', 'bob']);
    expect(result.status).toBe(0);
    const verifier = new JwtVerifier(new ConfigService(loadAppConfig({})));
    await expect(verifier.verify(result.stdout.trim())).resolves.toEqual({ id: 'bob', roles: ['customer'] });
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

  it('refuses to mint when only an OpenID Connect issuer is configured, naming it', () => {
    const result = runCli(['--sub', 'alice'], { AUTH_OIDC_ISSUER: 'https://sso.example.com/realms/acme' });
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('only AUTH_OIDC_ISSUER is configured');
  });
});
