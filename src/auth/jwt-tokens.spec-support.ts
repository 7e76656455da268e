import { createHmac } from 'node:crypto';
import { ConfigService } from '@nestjs/config';
import { SignJWT, type JWTPayload } from 'jose';
import { loadAppConfig, type AppConfig } from '../config/app-config';
import { UnauthenticatedError } from '../common/domain-error';

/** The tokens and configuration the JwtVerifier specs sign and verify with. */
export const SECRET = 'test-secret-of-at-least-thirty-two-characters';
export const now = () => Math.floor(Date.now() / 1000);

export function configWith(auth: AppConfig['auth']): ConfigService<AppConfig, true> {
  return new ConfigService({ ...loadAppConfig({}), auth });
}

/** An HS256 token of a raw payload text: JSON a signer would never write (`1e309`). */
export function rawHs256(payloadJson: string, secret = SECRET): string {
  const head = Buffer.from(JSON.stringify({ alg: 'HS256' })).toString('base64url');
  const body = Buffer.from(payloadJson).toString('base64url');
  return `${head}.${body}.${createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')}`;
}

export function hs256(payload: JWTPayload, secret = SECRET): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));
}

export async function rejection(promise: Promise<unknown>): Promise<UnauthenticatedError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UnauthenticatedError);
  return error as UnauthenticatedError;
}
