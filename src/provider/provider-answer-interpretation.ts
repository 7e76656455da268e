import type { RawProviderAnswer } from './provider-answer';
import type { ProviderRequest, ProviderResponse } from './provider-request';
import {
  ProviderBadResponseError,
  type ProviderErrorShape,
  ProviderRateLimitedError,
  ProviderRejectedError,
  ProviderServerError,
  ProviderUnauthorizedError,
} from './provider.errors';

/**
 * Interprets a read answer: the data of a success, or the typed error of a refusal. A success
 * status whose JSON says `success: false` is a refusal too (the provider does not say which
 * status its init and distribution errors use).
 */
export function interpretAnswer<T>(request: ProviderRequest, answer: RawProviderAnswer): ProviderResponse<T> {
  const { status, body } = answer;
  if (status >= 200 && status < 300) {
    if (answer.nonJson || body === null || typeof body !== 'object') {
      throw new ProviderBadResponseError(`The payment provider answered ${request.endpoint} with an unreadable body.`, {
        providerStatus: status,
      });
    }
    if ((body as { success?: unknown }).success === false) throw rejection(status, answer);
    return { status, data: body as T };
  }
  if (status === 401) {
    throw new ProviderUnauthorizedError('The payment provider refused the service credentials.', {
      providerStatus: status,
      providerMessage: messageOf(body),
    });
  }
  if (status === 429) {
    return throwRateLimited(answer);
  }
  if (status >= 500) {
    throw new ProviderServerError(`The payment provider failed on ${request.endpoint} (HTTP ${status}); the outcome is unknown.`, {
      providerStatus: status,
      providerMessage: answer.nonJson ? undefined : messageOf(body),
    });
  }
  throw rejection(status, answer);
}

function messageOf(body: unknown): string | undefined {
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.slice(0, 500) : undefined;
}

/** Recognises the provider's documented error bodies. */
export function errorShapeOf(body: unknown, nonJson: boolean): ProviderErrorShape {
  if (nonJson || body === null || typeof body !== 'object') return 'non_json';
  const b = body as Record<string, unknown>;
  if (b.success === false && b.status === 'FAILURE' && 'data' in b) return 'payin_failure_envelope';
  if (b.success === false && typeof b.code === 'string') return 'code_success_message';
  if (typeof b.error === 'number' && typeof b.message === 'string') return 'error_message';
  if (b.success === false) return 'success_false';
  return 'unrecognised_json';
}

function rejection(status: number, answer: RawProviderAnswer): ProviderRejectedError {
  const shape = errorShapeOf(answer.body, answer.nonJson);
  const body = answer.body as Record<string, unknown> | null;
  const providerCode =
    shape === 'error_message' ? (body?.error as number) : shape === 'code_success_message' ? (body?.code as string) : undefined;
  return new ProviderRejectedError(shape, {
    providerStatus: status,
    providerMessage: shape === 'non_json' ? undefined : messageOf(body),
    providerCode,
    body: shape === 'non_json' ? undefined : body,
  });
}

function throwRateLimited(answer: RawProviderAnswer): never {
  const error = new ProviderRateLimitedError('The payment provider is rate limiting the service; retry later.', {
    providerStatus: 429,
    providerMessage: messageOf(answer.body),
  });
  const seconds = Number(answer.retryAfter);
  error.headers['retry-after'] = Number.isFinite(seconds) && seconds > 0 ? String(Math.ceil(seconds)) : '60';
  throw error;
}
