import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from 'jose';
import { boundedFetch } from '../common/bounded-download';

/**
 * The largest key set read. A JWKS holds a few public keys (a few KiB); past this the download is
 * cut and the keys are unavailable (503), instead of a hostile or broken endpoint filling memory.
 */
export const KEY_SET_MAX_BYTES = 256 * 1024;

/**
 * jose's remote key set at `url` (cached, refetched on an unknown `kid`, so key rotation works),
 * its download bounded while it streams (KEY_SET_MAX_BYTES).
 */
export function remoteKeySet(url: URL): JWTVerifyGetKey {
  return createRemoteJWKSet(url, { [customFetch]: boundedFetch(KEY_SET_MAX_BYTES) });
}
