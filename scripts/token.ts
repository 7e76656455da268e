/**
 * Mints a bearer token for development and for finance staff:
 *   npm run token -- --sub alice --roles finance --ttl 8h
 *   TOKEN=$(npm run -s token -- --sub alice)
 * Signs with the service's own HS256 secret (the development one, or AUTH_JWT_SECRET), so stdout
 * carries only the token and every message goes to stderr.
 */
import { parseArgs } from 'node:util';
import { loadAppConfig, loadDotEnvIfPresent } from '../src/config/app-config';
import { isRole, ROLES, type Role } from '../src/auth/auth.types';
import { mintToken } from '../src/auth/token-minter';

const USAGE = `usage: npm run token -- --sub <user id> [--roles ${ROLES.join(',')}] [--ttl 1h] [--email <address> [--email-verified]]
  --sub    the user id (JWT "sub"), required
  --roles  comma-separated roles, default customer
  --ttl    lifetime: 45s, 30m, 8h, 2d or plain seconds, default 1h (at most AUTH_MAX_TOKEN_TTL)
  --email  the "email" claim (a customer links a wallet only for its own, verified, email)
  --email-verified  sets "email_verified": true (false without it, when --email is given)`;

class UsageError extends Error {}

function parseRoles(text: string): Role[] {
  const roles = text
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role !== '');
  if (roles.length === 0) throw new UsageError(`--roles needs at least one of ${ROLES.join(', ')}`);
  const unknown = roles.filter((role) => !isRole(role));
  if (unknown.length > 0) throw new UsageError(`unknown role(s) ${unknown.join(', ')}: use ${ROLES.join(', ')}`);
  return roles as Role[];
}

async function main(): Promise<void> {
  let values: { sub?: string; roles?: string; ttl?: string; email?: string; 'email-verified'?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        sub: { type: 'string' },
        roles: { type: 'string', default: 'customer' },
        ttl: { type: 'string', default: '1h' },
        email: { type: 'string' },
        'email-verified': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) {
    console.error(USAGE);
    return;
  }
  if (!values.sub?.trim()) throw new UsageError('--sub is required');
  const roles = parseRoles(values.roles ?? 'customer');

  loadDotEnvIfPresent();
  const { auth } = loadAppConfig(process.env);
  if (!auth.jwtSecret) {
    throw new Error(
      `only ${auth.oidc ? 'AUTH_OIDC_ISSUER' : 'AUTH_JWKS_URL'} is configured: tokens come from the identity provider, this command cannot mint one the service accepts`,
    );
  }
  if (values['email-verified'] && values.email === undefined) throw new UsageError('--email-verified needs --email');
  const token = await mintToken({
    sub: values.sub.trim(),
    roles,
    ttl: values.ttl ?? '1h',
    secret: auth.jwtSecret,
    // The service requires what it is configured to check: mint what it accepts.
    issuer: auth.issuer,
    audience: auth.audience,
    maxTtlSeconds: auth.maxTokenTtlSeconds,
    email: values.email,
    emailVerified: values.email === undefined ? undefined : values['email-verified'] === true,
  });
  process.stdout.write(`${token}\n`);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`token: ${message}`);
  if (error instanceof UsageError) console.error(USAGE);
  process.exitCode = 2;
});
