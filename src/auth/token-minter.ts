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

/** '45s' | '30m' | '8h' | '2d' | '3600' (plain seconds) → seconds. */
export function parseTtl(text: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!match) {
    throw new TokenMintingError(`Invalid TTL "${text}": use a number followed by s, m, h or d (e.g. 45s, 30m, 8h, 2d) or plain seconds`);
  }
  const seconds = Number(match[1]) * TTL_UNIT_SECONDS[(match[2] || 's') as keyof typeof TTL_UNIT_SECONDS];
  if (seconds <= 0) throw new TokenMintingError(`Invalid TTL "${text}": it must be longer than zero`);
  if (seconds > MAX_TTL_SECONDS) throw new TokenMintingError(`Invalid TTL "${text}": at most ${MAX_TTL_SECONDS / 86400}d`);
  return seconds;
}

export interface MintTokenOptions {
  sub: string;
  roles: Role[];
  /** Seconds, or a text parseTtl understands. */
  ttl: number | string;
  /** The HS256 secret the service verifies with (AUTH_JWT_SECRET). */
  secret: string;
}

/** Signs an HS256 token shaped like the identity provider's: `sub`, `roles`, `iat`, `exp`. */
export async function mintToken({ sub, roles, ttl, secret }: MintTokenOptions): Promise<string> {
  if (sub.trim() === '') throw new TokenMintingError('The subject (sub) must not be empty');
  if (roles.length === 0) throw new TokenMintingError(`At least one role is required (${ROLES.join(', ')})`);
  const unknown = roles.filter((role) => !isRole(role));
  if (unknown.length > 0) throw new TokenMintingError(`Unknown role(s) ${unknown.join(', ')}: use ${ROLES.join(', ')}`);
  if (secret === '') throw new TokenMintingError('The signing secret must not be empty');
  const ttlSeconds = typeof ttl === 'number' ? parseTtl(String(ttl)) : parseTtl(ttl);
  const issuedAt = Math.floor(Date.now() / 1000);
  return new SignJWT({ roles: [...new Set(roles)] })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(sub)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}
