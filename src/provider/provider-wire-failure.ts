import { PROVIDER_ANSWER_MAX_BYTES } from './provider-axios-client';
import type { ProviderRequest } from './provider-request';
import {
  ProviderBadResponseError,
  ProviderConnectionLostError,
  type ProviderError,
  ProviderTimeoutError,
  ProviderUnreachableError,
} from './provider.errors';

/**
 * ERR_BAD_REQUEST: axios refused to send (a body past maxBodyLength, an unusable URL): it is raised
 * before anything is written, as is every other code of this set.
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_INVALID_URL',
  'ERR_BAD_REQUEST',
]);
const TIMEOUT_CODES = new Set(['ECONNABORTED', 'ETIMEDOUT']);

/** What a rejected axios exchange (or an error thrown before it) may carry. */
interface WireFailure {
  code?: string;
  message?: unknown;
  response?: unknown;
  /** The ClientRequest, whose `res` is the answer whose head was read. */
  request?: { res?: { statusCode?: number } };
}

/**
 * What a rejected exchange proves. The cause kept is a plain Error (message and code): never the
 * AxiosError, whose config holds the request's headers (the bearer token, the API key).
 */
export function wireFailure(error: unknown, request: ProviderRequest, timeoutMs: number): ProviderError {
  const { code, message, response, request: sent } = (error ?? {}) as WireFailure;
  const cause = Object.assign(new Error(typeof message === 'string' ? message : String(error)), { code });
  // Past maxContentLength axios destroys the answer and rejects with ERR_BAD_RESPONSE and no
  // response (an answer cut short carries the response it had begun).
  if (code === 'ERR_BAD_RESPONSE' && response === undefined) {
    return new ProviderBadResponseError(
      `The payment provider answered ${request.endpoint} with more than ${PROVIDER_ANSWER_MAX_BYTES} bytes; the outcome is unknown.`,
      { providerStatus: sent?.res?.statusCode, cause },
    );
  }
  if (code && TIMEOUT_CODES.has(code)) {
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
