import { Injectable } from '@nestjs/common';
import { createRemoteJWKSet, decodeProtectedHeader, errors, jwtVerify, type CryptoKey, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { UnauthenticatedError } from '../common/domain-error';
import { unsafeTextReason } from '../common/validation';
import { DEFAULT_ROLES, ROLES, isRole, type AuthUser, type Role } from './auth.types';

const HMAC_ALGORITHMS = ['HS256'];
const ASYMMETRIC_ALGORITHMS = ['RS256', 'ES256'];
/** Identity provider and service clocks drift; a few seconds of skew must not log users out. */
const CLOCK_TOLERANCE_SECONDS = 30;
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
  /** Imported once: jose would import raw key bytes again on every verification. */
  private readonly hmacKey?: Promise<CryptoKey>;
  private readonly remoteKeys?: JWTVerifyGetKey;

  constructor(@InjectConfig() config: AppConfig) {
    const { jwtSecret, jwksUrl } = config.auth;
    if (jwtSecret) {
      this.hmacKey = crypto.subtle.importKey('raw', new TextEncoder().encode(jwtSecret), { name: 'HMAC', hash: 'SHA-256' }, false, [
        'verify',
      ]);
    }
    // jose caches the key set and refetches on an unknown `kid`, so identity provider key rotation works.
    if (jwksUrl) this.remoteKeys = createRemoteJWKSet(new URL(jwksUrl));
    if (!this.hmacKey && !this.remoteKeys) {
      throw new Error('JwtVerifier needs config.auth.jwtSecret or config.auth.jwksUrl');
    }
  }

  async verify(token: string | undefined): Promise<AuthUser> {
    if (!token) throw new UnauthenticatedError(TOKEN_MESSAGES.missing);
    if (token.length > MAX_TOKEN_LENGTH) throw new UnauthenticatedError(TOKEN_MESSAGES.invalid);
    const payload = await this.verifySignatureAndTimes(token);
    return { id: readSubject(payload), roles: readRoles(payload) };
  }

  private async verifySignatureAndTimes(token: string): Promise<JWTPayload> {
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch (error) {
      throw new UnauthenticatedError(TOKEN_MESSAGES.invalid, { cause: error });
    }
    // The header only picks the key source; `algorithms` below pins each source to its own
    // algorithms, so a token cannot get an RSA public key used as an HMAC secret (or `none`).
    const options = { clockTolerance: CLOCK_TOLERANCE_SECONDS, requiredClaims: ['sub', 'exp'] };
    try {
      if (alg !== undefined && HMAC_ALGORITHMS.includes(alg) && this.hmacKey) {
        return (await jwtVerify(token, await this.hmacKey, { ...options, algorithms: HMAC_ALGORITHMS })).payload;
      }
      if (alg !== undefined && ASYMMETRIC_ALGORITHMS.includes(alg) && this.remoteKeys) {
        return (await jwtVerify(token, this.remoteKeys, { ...options, algorithms: ASYMMETRIC_ALGORITHMS })).payload;
      }
    } catch (error) {
      throw toUnauthenticated(error);
    }
    throw new UnauthenticatedError(TOKEN_MESSAGES.invalid);
  }
}

function toUnauthenticated(error: unknown): UnauthenticatedError {
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
