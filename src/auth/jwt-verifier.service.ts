import { createSecretKey, type KeyObject } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createRemoteJWKSet, decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { AppConfig } from '../config/app-config';
import { UnauthenticatedError } from '../common/domain-error';
import { unsafeTextReason } from '../common/validation';
import { DEFAULT_ROLES, ROLES, isRole, type AuthUser, type Role } from './auth.types';
import { Hs256Error, verifyHs256 } from './hs256';

const ASYMMETRIC_ALGORITHMS = ['RS256', 'ES256'];
/** Identity provider and service clocks drift; a few seconds of skew must not log users out. */
const CLOCK_TOLERANCE_SECONDS = 30;
const REQUIRED_CLAIMS = ['sub', 'exp'];
/** AUTH_MAX_TOKEN_TTL's default: 30 days. */
export const DEFAULT_MAX_TOKEN_TTL_SECONDS = 30 * 86400;
/** Far above any real token; refuses absurd headers before any crypto work. */
const MAX_TOKEN_LENGTH = 8192;

export const TOKEN_MESSAGES = {
  missing: 'Missing bearer token',
  expired: 'The bearer token has expired',
  invalid: 'The bearer token is invalid',
  keysUnavailable: 'The bearer token could not be verified: the signing keys are unavailable',
} as const;

/**
 * Verifies the merchant identity provider's bearer JWTs: HS256 with AUTH_JWT_SECRET and/or
 * RS256/ES256 with the keys published at AUTH_JWKS_URL. Every failure becomes an
 * UnauthenticatedError whose detail never echoes the token, the keys or jose internals.
 */
@Injectable()
export class JwtVerifier {
  /**
   * AUTH_JWT_SECRET, then AUTH_JWT_PREVIOUS_SECRETS; made once. HS256 tokens are verified
   * synchronously (verifyHs256), not through WebCrypto.
   */
  private readonly hmacKeys: KeyObject[] = [];
  private readonly remoteKeys?: JWTVerifyGetKey;
  private readonly policy: TokenPolicy;

  constructor(config: ConfigService<AppConfig, true>) {
    const { jwtSecret, jwtPreviousSecrets, jwksUrl, issuer, audience, maxTokenTtlSeconds } = config.get('auth', { infer: true });
    this.policy = { issuer, audience, maxTtlSeconds: maxTokenTtlSeconds ?? DEFAULT_MAX_TOKEN_TTL_SECONDS };
    if (jwtSecret) this.hmacKeys = [jwtSecret, ...(jwtPreviousSecrets ?? [])].map((secret) => createSecretKey(Buffer.from(secret, 'utf8')));
    // jose caches the key set and refetches on an unknown `kid`, so identity provider key rotation works.
    if (jwksUrl) this.remoteKeys = createRemoteJWKSet(new URL(jwksUrl));
    if (this.hmacKeys.length === 0 && !this.remoteKeys) {
      throw new Error('JwtVerifier needs config.auth.jwtSecret or config.auth.jwksUrl');
    }
  }

  async verify(token: string | undefined): Promise<AuthUser> {
    if (!token) throw new UnauthenticatedError(TOKEN_MESSAGES.missing);
    if (token.length > MAX_TOKEN_LENGTH) throw new UnauthenticatedError(TOKEN_MESSAGES.invalid);
    const payload = await this.verifySignatureAndTimes(token);
    // Checked after the signature, on the claims of either key source, so both follow one rule.
    checkTokenClaims(payload, this.policy, Math.floor(Date.now() / 1000));
    return { id: readSubject(payload), roles: readRoles(payload), ...readEmail(payload) };
  }

  private async verifySignatureAndTimes(token: string): Promise<JWTPayload> {
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
        return verifyHs256(token, this.hmacKeys, { clockToleranceSeconds: CLOCK_TOLERANCE_SECONDS, requiredClaims: REQUIRED_CLAIMS });
      }
      if (alg !== undefined && ASYMMETRIC_ALGORITHMS.includes(alg) && this.remoteKeys) {
        const options = { clockTolerance: CLOCK_TOLERANCE_SECONDS, requiredClaims: REQUIRED_CLAIMS, algorithms: ASYMMETRIC_ALGORITHMS };
        return (await jwtVerify(token, this.remoteKeys, options)).payload;
      }
    } catch (error) {
      throw toUnauthenticated(error);
    }
    throw new UnauthenticatedError(TOKEN_MESSAGES.invalid);
  }
}

function toUnauthenticated(error: unknown): UnauthenticatedError {
  if (error instanceof Hs256Error) {
    return new UnauthenticatedError(error.refusal === 'expired' ? TOKEN_MESSAGES.expired : TOKEN_MESSAGES.invalid, { cause: error });
  }
  if (error instanceof errors.JWTExpired) return new UnauthenticatedError(TOKEN_MESSAGES.expired, { cause: error });
  if (isKeySetUnavailable(error)) return new UnauthenticatedError(TOKEN_MESSAGES.keysUnavailable, { cause: error });
  return new UnauthenticatedError(TOKEN_MESSAGES.invalid, { cause: error });
}

/**
 * Key set unreachable (network error, timeout), not 200 or not a key set: the token may be fine,
 * but the caller still gets a 401 (fail closed), with a detail that tells operators where to look.
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

function readRoles(payload: JWTPayload): Role[] {
  const claim = payload.roles;
  // An empty list is read like an absent claim: both fall back to the least privileged role.
  if (claim === undefined || claim === null || (Array.isArray(claim) && claim.length === 0)) return [...DEFAULT_ROLES];
  // An unknown role is refused rather than dropped: silently ignoring a misspelt "admn" would
  // hand its holder a different account type than the identity provider meant.
  if (!Array.isArray(claim) || !claim.every(isRole)) {
    throw new UnauthenticatedError(`${TOKEN_MESSAGES.invalid}: "roles" must be a list of ${ROLES.join(', ')}`);
  }
  return [...new Set(claim)];
}
