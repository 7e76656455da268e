/**
 * When a call may be sent again, and after how long. Only calls that cannot do anything twice are
 * retried: those that carry an Idempotency-Key (the same key every time: the service answers the
 * first request's result, or 409 while it is still running) and reads (GET).
 */
import type { ProblemError } from './problem.js';

export interface RetryOptions {
  /** Attempts in all, the first included (default 4). */
  maxAttempts?: number;
  /** The first wait when the answer names none; doubled at each attempt (default 500 ms). */
  baseDelayMs?: number;
  /** Longest wait: a Retry-After beyond it is not waited for, the problem is thrown (default 30 s). */
  maxDelayMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 30_000 };

/**
 * How long to wait before attempt `attempt + 1` after `failure` (a ProblemError), or undefined
 * when it must not be retried: a network error, `409 idempotency_in_progress`, `503`, or `429`
 * with Retry-After; nothing else (a 4xx will say the same again; a 500 or 502 may have acted).
 */
export function retryDelayMs(failure: ProblemError, attempt: number, policy: Required<RetryOptions>): number | undefined {
  if (attempt >= policy.maxAttempts) return undefined;
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const named = failure.retryAfter === undefined ? undefined : failure.retryAfter * 1000;
  const retryable =
    failure.code === 'network_error' ||
    (failure.status === 409 && failure.code === 'idempotency_in_progress') ||
    failure.status === 503 ||
    (failure.status === 429 && named !== undefined);
  if (!retryable) return undefined;
  if (named === undefined) return backoff;
  return named > policy.maxDelayMs ? undefined : named;
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The abort reason (an AbortError DOMException unless the caller gave an Error of its own). */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException('The operation was aborted.', 'AbortError');
}
