import { createSecretKey, type KeyObject } from 'node:crypto';
import { Injectable, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { AppConfig } from '../config/app-config';
import { DomainError, UnauthenticatedError } from '../common/domain-error';
import { unsafeTextReason } from '../common/validation';
import { ROLES, type AuthUser, type Role } from './auth.types';
import { Hs256Error, verifyHs256 } from './hs256';
import { IdentityProviderUnavailableError } from './identity-provider-unavailable';
import { OidcIssuer } from './oidc-issuer.service';
import { remoteKeySet } from './remote-key-set';
import { rolesAt } from './roles-claim';

const ASYMMETRIC_ALGORITHMS = ['RS256', 'ES256'];
/** Identity provider and service clocks drift; a few seconds of skew must not log users out. */
const CLOCK_TOLERANCE_SECONDS = 30;
const REQUIRED_CLAIMS = ['sub', 'exp'];
/** AUTH_MAX_TOKEN_TTL's default: 30 days. */
export const DEFAULT_MAX_TOKEN_TTL_SECONDS = 30 * 86400;
/** Far above any real token; refuses absurd headers before any crypto work. */
const MAX_TOKEN_LENGTH = 8192;
/** Verified tokens kept at most (see JwtVerifier.remember), and the longest one kept: a few MB at worst. */
export const VERIFIED_TOKENS_KEPT = 1024;
const VERIFIED_TOKEN_MAX_LENGTH = 2048;
/** How long a token verified with an identity provider's published keys is trusted before it is verified again. */
export const REMOTE_KEY_RECHECK_MS = 60_000;

export const TOKEN_MESSAGES = {
  missing: 'Missing bearer token',
  expired: 'The bearer token has expired',
  invalid: 'The bearer token is invalid',
  keysUnavailable: 'The bearer token could not be verified: the signing keys are unavailable',
} as const;

/**
 * Verifies the merchant identity provider's bearer JWTs: HS256 with AUTH_JWT_SECRET and/or
 * RS256/ES256 with the keys published at AUTH_JWKS_URL, or those of the OpenID Connect provider
 * AUTH_OIDC_ISSUER (found through its discovery document). Every failure becomes an
 * UnauthenticatedError whose detail never echoes the token, the keys or jose internals; keys that
 * cannot be fetched are a 503 (IdentityProviderUnavailableError), not a reason to sign in again.
 */
@Injectable()
export class JwtVerifier {
  /**
   * AUTH_JWT_SECRET, then AUTH_JWT_PREVIOUS_SECRETS; made once. HS256 tokens are verified
   * synchronously (verifyHs256), not through WebCrypto.
   */
  private readonly hmacKeys: KeyObject[] = [];
  private readonly remoteKeys?: JWTVerifyGetKey;
  /** Set when the remote keys are the OpenID Connect provider's: its tokens must name it in `iss`, and carry their roles at `rolesClaim`. */
  private readonly oidc?: { issuer: string; rolesClaim: string };
  private readonly policy: TokenPolicy;
  /** Tokens verified lately, by their whole text (signature included): see `remember`. */
  private readonly verified = new Map<string, { user: AuthUser; expiresAtMs: number; recheckAtMs: number }>();

  constructor(config: ConfigService<AppConfig, true>, @Optional() oidcIssuer?: OidcIssuer) {
    const { jwtSecret, jwtPreviousSecrets, jwksUrl, issuer, audience, maxTokenTtlSeconds, oidc, rolesClaim } = config.get('auth', {
      infer: true,
    });
    this.policy = { issuer, audience, maxTtlSeconds: maxTokenTtlSeconds ?? DEFAULT_MAX_TOKEN_TTL_SECONDS };
    if (jwtSecret) this.hmacKeys = [jwtSecret, ...(jwtPreviousSecrets ?? [])].map((secret) => createSecretKey(Buffer.from(secret, 'utf8')));
    // Cached and refetched on an unknown `kid` (key rotation works), its download bounded (remoteKeySet).
    if (jwksUrl) this.remoteKeys = remoteKeySet(new URL(jwksUrl));
    if (oidc) {
      if (!oidcIssuer) throw new Error('JwtVerifier needs the OidcIssuer when config.auth.oidc is set');
      this.remoteKeys = oidcIssuer.keys;
      this.oidc = { issuer: oidc.issuer, rolesClaim: rolesClaim ?? 'roles' };
    }
    if (this.hmacKeys.length === 0 && !this.remoteKeys) {
      throw new Error('JwtVerifier needs config.auth.jwtSecret or config.auth.jwksUrl or config.auth.oidc');
    }
  }

  async verify(token: string | undefined): Promise<AuthUser> {
    if (!token) throw new UnauthenticatedError(TOKEN_MESSAGES.missing);
    if (token.length > MAX_TOKEN_LENGTH) throw new UnauthenticatedError(TOKEN_MESSAGES.invalid);
    const remembered = this.remembered(token);
    if (remembered) return remembered;
    const nowMs = Date.now();
    const { payload, byOidcIssuer, byRemoteKeys } = await this.verifySignatureAndTimes(token);
    // Checked after the signature, on the claims of either key source, so both follow one rule.
    checkTokenClaims(payload, this.policy, Math.floor(nowMs / 1000));
    // The OpenID Connect provider's list also holds other applications' roles (Keycloak's
    // offline_access): unknown names are ignored there, and refused in the service's own tokens.
    const roles = byOidcIssuer ? readRoles(payload, this.oidc!.rolesClaim, 'ignore') : readRoles(payload, 'roles', 'refuse');
    const user: AuthUser = { id: readSubject(payload), roles, ...readEmail(payload) };
    this.remember(token, user, payload, byRemoteKeys, nowMs);
    return { ...user, roles: [...roles] };
  }

  /**
   * The caller of a token verified lately and still valid (see `remember`), at once; undefined when
   * it must be verified (again). Each answer is a copy: no caller can change what is kept.
   */
  remembered(token: string): AuthUser | undefined {
    if (token.length > VERIFIED_TOKEN_MAX_LENGTH) return undefined;
    const known = this.verified.get(token);
    if (!known) return undefined;
    const nowMs = Date.now();
    // Only an expiry can turn a verified token down later (nbf and the lifetime cap only relax
    // with time): past it, or past its recheck, the token is verified again from scratch.
    if (known.expiresAtMs > nowMs && known.recheckAtMs > nowMs) return { ...known.user, roles: [...known.user.roles] };
    this.verified.delete(token);
    return undefined;
  }

  /**
   * Keeps a verified token, so that the same bearer sent with the next requests costs a lookup
   * instead of decoding, an HMAC and the claim checks. Bounded (the oldest goes first); a token
   * checked with remote keys is verified again after REMOTE_KEY_RECHECK_MS, since those keys can be
   * withdrawn while the service runs.
   */
  private remember(token: string, user: AuthUser, payload: JWTPayload, remoteKeys: boolean, nowMs: number): void {
    if (token.length > VERIFIED_TOKEN_MAX_LENGTH || typeof payload.exp !== 'number') return;
    // verifyHs256 and jose refuse a token once exp <= now - tolerance.
    const expiresAtMs = (payload.exp + CLOCK_TOLERANCE_SECONDS) * 1000;
    const recheckAtMs = remoteKeys ? nowMs + REMOTE_KEY_RECHECK_MS : Number.POSITIVE_INFINITY;
    if (this.verified.size >= VERIFIED_TOKENS_KEPT) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, { user, expiresAtMs, recheckAtMs });
  }

  private async verifySignatureAndTimes(token: string): Promise<{ payload: JWTPayload; byOidcIssuer: boolean; byRemoteKeys: boolean }> {
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch (error) {
      throw new UnauthenticatedError(TOKEN_MESSAGES.invalid, { cause: error });
    }
    // The header only picks the key source; each source accepts its own algorithms only (verifyHs256
    // HS256, jose's `algorithms` RS256/ES256), so a token cannot get an RSA public key used as an
    // HMAC secret (or `none`).
    try {
      if (alg === 'HS256' && this.hmacKeys.length > 0) {
        const payload = verifyHs256(token, this.hmacKeys, {
          clockToleranceSeconds: CLOCK_TOLERANCE_SECONDS,
          requiredClaims: REQUIRED_CLAIMS,
        });
        return { payload, byOidcIssuer: false, byRemoteKeys: false };
      }
      if (alg !== undefined && ASYMMETRIC_ALGORITHMS.includes(alg) && this.remoteKeys) {
        // The provider's keys sign for the provider only: its `iss` is checked whatever AUTH_JWT_ISSUER says.
        const options = {
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          requiredClaims: REQUIRED_CLAIMS,
          algorithms: ASYMMETRIC_ALGORITHMS,
          ...(this.oidc ? { issuer: this.oidc.issuer } : {}),
        };
        return {
          payload: (await jwtVerify(token, this.remoteKeys, options)).payload,
          byOidcIssuer: this.oidc !== undefined,
          byRemoteKeys: true,
        };
      }
    } catch (error) {
      throw toUnauthenticated(error);
    }
    throw new UnauthenticatedError(TOKEN_MESSAGES.invalid);
  }
}

function toUnauthenticated(error: unknown): DomainError {
  // The OpenID Connect provider could not be discovered (OidcIssuer.keys): already a 503.
  if (error instanceof IdentityProviderUnavailableError) return error;
  if (error instanceof Hs256Error) {
    return new UnauthenticatedError(error.refusal === 'expired' ? TOKEN_MESSAGES.expired : TOKEN_MESSAGES.invalid, { cause: error });
  }
  if (error instanceof errors.JWTExpired) return new UnauthenticatedError(TOKEN_MESSAGES.expired, { cause: error });
  if (isKeySetUnavailable(error)) return new IdentityProviderUnavailableError(TOKEN_MESSAGES.keysUnavailable, { cause: error });
  return new UnauthenticatedError(TOKEN_MESSAGES.invalid, { cause: error });
}

/**
 * Key set unreachable (network error, timeout), not 200 or not a key set: the token may be fine,
 * so the caller gets a 503 to retry rather than a 401 that would send a person to sign in again,
 * and nothing is served (fail closed); the detail tells operators where to look.
 * jose raises the plain base JOSEError only for a failed key set download.
 */
function isKeySetUnavailable(error: unknown): boolean {
  if (!(error instanceof errors.JOSEError)) return true;
  return error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || error.code === errors.JOSEError.code;
}

export interface TokenPolicy {
  issuer?: string;
  audience?: string;
  maxTtlSeconds: number;
}

/**
 * The contract's claim rules beyond the signature and the times: `iss` and `aud` when configured,
 * and a lifetime of at most AUTH_MAX_TOKEN_TTL, judged on `exp` − `iat` and on `exp` − now (a
 * token without `iat` by the latter only): a token that stays valid for years is a standing
 * credential, whoever signed it. `exp` must be finite (1e309 parses to Infinity).
 */
export function checkTokenClaims(payload: Record<string, unknown>, policy: TokenPolicy, nowSeconds: number): void {
  const refuse = (why: string) => new UnauthenticatedError(`${TOKEN_MESSAGES.invalid}: ${why}`);
  if (policy.issuer !== undefined && payload.iss !== policy.issuer) throw refuse('"iss" is not the expected issuer');
  if (policy.audience !== undefined) {
    const { aud } = payload;
    const named = typeof aud === 'string' ? aud === policy.audience : Array.isArray(aud) && aud.includes(policy.audience);
    if (!named) throw refuse('"aud" does not name this service');
  }
  const { exp, iat } = payload;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw refuse('"exp" must be a finite number');
  // The identity provider's clock may run ahead of ours by the tolerance.
  if (exp - nowSeconds > policy.maxTtlSeconds + CLOCK_TOLERANCE_SECONDS) throw refuse('the token lives longer than allowed');
  if (iat !== undefined) {
    if (typeof iat !== 'number' || !Number.isFinite(iat)) throw refuse('"iat" must be a finite number');
    if (exp - iat > policy.maxTtlSeconds) throw refuse('the token lives longer than allowed');
  }
}

/** The token's `email`, and whether the identity provider verified it (`email_verified: true`, the boolean only). */
function readEmail(payload: JWTPayload): Pick<AuthUser, 'email' | 'emailVerified'> {
  const { email } = payload;
  if (typeof email !== 'string' || email.trim() === '' || unsafeTextReason(email)) return {};
  return { email, emailVerified: payload.email_verified === true };
}

function readSubject(payload: JWTPayload): string {
  if (typeof payload.sub !== 'string' || payload.sub.trim() === '' || unsafeTextReason(payload.sub)) {
    throw new UnauthenticatedError(`${TOKEN_MESSAGES.invalid}: "sub" must be a non-empty string of valid text`);
  }
  return payload.sub;
}

/**
 * The roles at `path` (rolesAt): an empty or absent claim falls back to the least privileged role.
 * In the service's own tokens an unknown role is refused rather than dropped: silently ignoring a
 * misspelt "admn" would hand its holder a different account type than the identity provider meant.
 */
function readRoles(payload: JWTPayload, path: string, unknown: 'refuse' | 'ignore'): Role[] {
  const roles = rolesAt(payload, path, unknown);
  if (!roles) throw new UnauthenticatedError(`${TOKEN_MESSAGES.invalid}: "${path}" must be a list of ${ROLES.join(', ')}`);
  return roles;
}
