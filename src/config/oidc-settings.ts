import { isHttpsOrLoopback } from '../common/loopback';

/** Sign-in through the company's OpenID Connect provider (AUTH_OIDC_*). */
export interface OidcSettings {
  /** AUTH_OIDC_ISSUER, exactly as the provider writes `iss` (a trailing slash is part of it and kept). */
  issuer: string;
  /** AUTH_OIDC_SWAGGER_CLIENT_ID: the public client Swagger UI's Authorize signs in as; unset, Swagger UI takes a pasted token only. */
  swaggerClientId?: string;
  /** AUTH_OIDC_SWAGGER_SCOPES: the scopes Swagger UI asks for. */
  swaggerScopes: string[];
}

export interface OidcSettingsInput {
  issuer?: string;
  swaggerClientId?: string;
  swaggerScopes?: string;
  rolesClaim?: string;
  jwksUrl?: string;
  jwtIssuer?: string;
}

/** AUTH_ROLES_CLAIM's default: a top-level `roles` list, where the service's own tokens carry them (`npm run token`). */
export const DEFAULT_ROLES_CLAIM = 'roles';
const DEFAULT_SWAGGER_SCOPES = 'openid';
/** A dotted path of claim names: no empty step, no space. */
const ROLES_CLAIM_PATH = /^[^.\s]{1,100}(?:\.[^.\s]{1,100}){0,9}$/;
/** OAuth 2.0 scope tokens (RFC 6749, 3.3): printable ASCII but space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/;
const CLIENT_ID = /^[\x21-\x7e]{1,255}$/;

/**
 * Validates the OpenID Connect settings, pushing one problem per mistake (each names its variable):
 * the issuer must be https://, or http:// on a loopback address only (a token's keys and the
 * sign-in page must not travel in clear between machines); its keys are found through discovery, so
 * AUTH_JWKS_URL is not set with it, and AUTH_JWT_ISSUER, if set, must be the same issuer.
 */
export function checkOidcSettings(input: OidcSettingsInput, problems: string[]): { oidc?: OidcSettings; rolesClaim: string } {
  const rolesClaim = input.rolesClaim ?? DEFAULT_ROLES_CLAIM;
  if (!ROLES_CLAIM_PATH.test(rolesClaim))
    problems.push(`AUTH_ROLES_CLAIM must be a claim name or a dotted path of claim names, e.g. realm_access.roles (got "${rolesClaim}")`);
  const { issuer } = input;
  if (issuer === undefined) {
    // AUTH_ROLES_CLAIM and AUTH_OIDC_SWAGGER_SCOPES have defaults and go unused without the issuer;
    // a client id (none by default) means the issuer was forgotten.
    if (input.swaggerClientId !== undefined)
      problems.push('AUTH_OIDC_SWAGGER_CLIENT_ID signs in at AUTH_OIDC_ISSUER: set AUTH_OIDC_ISSUER too');
    return { rolesClaim };
  }
  const issuerProblem = issuerUrlProblem(issuer);
  if (issuerProblem) problems.push(`AUTH_OIDC_ISSUER ${issuerProblem} (got "${issuer}")`);
  if (input.jwksUrl !== undefined)
    problems.push(
      'AUTH_JWKS_URL and AUTH_OIDC_ISSUER are both set: the issuer publishes its keys through discovery, set only AUTH_OIDC_ISSUER',
    );
  if (input.jwtIssuer !== undefined && input.jwtIssuer !== issuer)
    problems.push('AUTH_JWT_ISSUER differs from AUTH_OIDC_ISSUER: no token could satisfy both; leave AUTH_JWT_ISSUER unset');
  if (input.swaggerClientId !== undefined && !CLIENT_ID.test(input.swaggerClientId))
    problems.push('AUTH_OIDC_SWAGGER_CLIENT_ID must be a client id of printable characters without spaces');
  const swaggerScopes = (input.swaggerScopes ?? DEFAULT_SWAGGER_SCOPES).split(/\s+/).filter(Boolean);
  if (swaggerScopes.length === 0 || swaggerScopes.length > 20 || !swaggerScopes.every((scope) => SCOPE_TOKEN.test(scope)))
    problems.push(
      `AUTH_OIDC_SWAGGER_SCOPES must be 1 to 20 scopes separated by spaces, e.g. "openid profile" (got "${input.swaggerScopes}")`,
    );
  return { oidc: { issuer, swaggerClientId: input.swaggerClientId, swaggerScopes }, rolesClaim };
}

/** Why an issuer URL is refused, or undefined when it is acceptable. */
export function issuerUrlProblem(issuer: string): string | undefined {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https:// URL';
  if (!isHttpsOrLoopback(url))
    return 'must be an https:// URL: http:// is accepted on a loopback address only (127.0.0.1, [::1], localhost)';
  if (url.username || url.password || url.search || url.hash) return 'must be a plain URL, without credentials, query or fragment';
  return undefined;
}
