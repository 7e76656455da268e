import type { ProviderRequest } from './provider-request';
import { PROVIDER_ANSWER_MAX_BYTES, WIRE_CODES, type WireError } from './provider-wire';
import {
  ProviderBadResponseError,
  ProviderConnectionLostError,
  type ProviderError,
  ProviderTimeoutError,
  ProviderUnreachableError,
} from './provider.errors';

/**
 * Codes raised before anything was written: the host could not be resolved or reached, or the
 * request could not be made (an unusable URL, header value or method, a body past its bound).
 */
const NOT_SENT_CODES = new Set<string>([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_INVALID_URL',
  'ERR_INVALID_CHAR',
  'ERR_INVALID_HTTP_TOKEN',
  'ERR_UNESCAPED_CHARACTERS',
  WIRE_CODES.requestTooLarge,
]);

/**
 * What a rejected exchange proves. The cause kept is a plain Error (message and code), never
 * anything that holds the request's headers (the bearer token, the API key).
 */
export function wireFailure(error: unknown, request: ProviderRequest, timeoutMs: number): ProviderError {
  const { code, message, status } = (error ?? {}) as WireError;
  const cause = Object.assign(new Error(typeof message === 'string' ? message : String(error)), { code });
  if (code === WIRE_CODES.answerTooLarge) {
    return new ProviderBadResponseError(
      `The payment provider answered ${request.endpoint} with more than ${PROVIDER_ANSWER_MAX_BYTES} bytes; the outcome is unknown.`,
      { providerStatus: status, cause },
    );
  }
  if (code === WIRE_CODES.timeout) {
    return new ProviderTimeoutError(
      `The payment provider did not answer ${request.endpoint} within ${timeoutMs} ms; the outcome is unknown.`,
      { cause },
    );
  }
  if (code && NOT_SENT_CODES.has(code)) {
    return new ProviderUnreachableError(`The payment provider could not be reached for ${request.endpoint}; nothing was sent.`, {
      cause,
    });
  }
  return new ProviderConnectionLostError(
    `The connection to the payment provider broke during ${request.endpoint}; the outcome is unknown.`,
    { cause },
  );
}
