import { SignJWT } from 'jose';
import { isRole, ROLES, type Role } from './auth.types';

const TTL_UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86400 } as const;
/** A longer-lived token is a standing credential; staff should mint a fresh one instead. */
export const MAX_TTL_SECONDS = 30 * 86400;

export class TokenMintingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenMintingError';
  }
}

/** '45s' | '30m' | '8h' | '2d' | '3600' (plain seconds) → seconds, at most `maxSeconds`. */
export function parseTtl(text: string, maxSeconds = MAX_TTL_SECONDS): number {
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!match) {
    throw new TokenMintingError(`Invalid TTL "${text}": use a number followed by s, m, h or d (e.g. 45s, 30m, 8h, 2d) or plain seconds`);
  }
  const seconds = Number(match[1]) * TTL_UNIT_SECONDS[(match[2] || 's') as keyof typeof TTL_UNIT_SECONDS];
  if (seconds <= 0) throw new TokenMintingError(`Invalid TTL "${text}": it must be longer than zero`);
  const max = Math.min(maxSeconds, MAX_TTL_SECONDS);
  if (seconds > max) throw new TokenMintingError(`Invalid TTL "${text}": at most ${max % 86400 === 0 ? `${max / 86400}d` : `${max}s`}`);
  return seconds;
}

export interface MintTokenOptions {
  sub: string;
  roles: Role[];
  /** Seconds, or a text parseTtl understands. */
  ttl: number | string;
  /** The HS256 secret the service verifies with (AUTH_JWT_SECRET). */
  secret: string;
  /** `iss` and `aud`, which the service requires when AUTH_JWT_ISSUER / AUTH_JWT_AUDIENCE are set. */
  issuer?: string;
  audience?: string;
  /** The service's AUTH_MAX_TOKEN_TTL: a longer TTL would mint a token it refuses. */
  maxTtlSeconds?: number;
  /** The `email` claim and `email_verified` (wallet links of a customer need both). */
  email?: string;
  emailVerified?: boolean;
}

/** Signs an HS256 token shaped like the identity provider's: `sub`, `roles`, `iat`, `exp` (and `iss`, `aud`, `email` when given). */
export async function mintToken({
  sub,
  roles,
  ttl,
  secret,
  issuer,
  audience,
  maxTtlSeconds,
  email,
  emailVerified,
}: MintTokenOptions): Promise<string> {
  if (sub.trim() === '') throw new TokenMintingError('The subject (sub) must not be empty');
  if (roles.length === 0) throw new TokenMintingError(`At least one role is required (${ROLES.join(', ')})`);
  const unknown = roles.filter((role) => !isRole(role));
  if (unknown.length > 0) throw new TokenMintingError(`Unknown role(s) ${unknown.join(', ')}: use ${ROLES.join(', ')}`);
  if (secret === '') throw new TokenMintingError('The signing secret must not be empty');
  if (email !== undefined && email.trim() === '') throw new TokenMintingError('The email must not be empty');
  const ttlSeconds = parseTtl(String(ttl), maxTtlSeconds);
  const issuedAt = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { roles: [...new Set(roles)] };
  if (email !== undefined) claims.email = email;
  if (emailVerified !== undefined) claims.email_verified = emailVerified;
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(sub);
  if (issuer !== undefined) jwt.setIssuer(issuer);
  if (audience !== undefined) jwt.setAudience(audience);
  return jwt
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}
