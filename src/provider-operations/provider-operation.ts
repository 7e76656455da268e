import type { Logger } from 'pino';
import { maskCardNumbersIn, redact } from '../logging/redaction';
import { providerErrorOf, ProviderError, ProviderRejectedError, provesNotSent } from '../provider/provider.errors';
import type { OperationLink, OperationTable } from './operation-tables';

/**
 * How a provider call that threw ends its operation:
 * - `refused`: the provider answered and refused; nothing happened there (FAILED, REJECTED…);
 * - `not_sent`: the error proves the request never left (budget spent, provider unreachable, our
 *   credentials refused: `provesNotSent`); nothing can have happened;
 * - `lost`: the answer was lost (timeout, 5xx, broken connection, unreadable answer): the provider
 *   may have acted, so the operation is UNKNOWN, never failed and never resent;
 * - `unexpected`: our own code failed after the call may have been sent: UNKNOWN too.
 * Texts are masked (no card number) and provider bodies redacted.
 */
export type ProviderFailure =
  | { kind: 'refused'; error: ProviderRejectedError; reason: string; providerMessage: string | null; providerResponse: unknown }
  | { kind: 'not_sent'; error: ProviderError; reason: string }
  | { kind: 'lost'; error: ProviderError; reason: string; providerMessage: string | null; code: string; httpStatus: number | null }
  | { kind: 'unexpected'; error: unknown };

/** The classification of an error thrown by a provider call (one rule for every operation type). */
export function failureOutcome(error: unknown): ProviderFailure {
  if (error instanceof ProviderRejectedError) {
    const providerMessage = error.providerMessage === undefined ? null : maskCardNumbersIn(error.providerMessage);
    return {
      kind: 'refused',
      error,
      reason: providerMessage ?? 'Refused by the payment provider',
      providerMessage,
      providerResponse: error.body === undefined || error.body === null ? { httpStatus: error.providerStatus } : redact(error.body),
    };
  }
  const providerError = providerErrorOf(error);
  if (providerError && provesNotSent(error)) {
    return { kind: 'not_sent', error: providerError, reason: `Not sent to the payment provider (${providerError.code})` };
  }
  if (error instanceof ProviderError) {
    return {
      kind: 'lost',
      error,
      reason: maskCardNumbersIn(error.detail),
      providerMessage: error.providerMessage === undefined ? null : maskCardNumbersIn(error.providerMessage),
      code: error.code,
      httpStatus: error.providerStatus ?? null,
    };
  }
  return { kind: 'unexpected', error };
}

/**
 * One kind of operation on the provider, as the lifecycle drives it (docs/guides/adding-a-provider-operation.md).
 * `Stored` is its record, `Input` what a request asks (stored PENDING before the call), `Failed` what
 * a request whose call failed answers once the failure is recorded (`never` when it always throws).
 */
export interface ProviderOperationType<Stored extends { id: string }, Input, Failed = never> {
  /** Its name in log lines, e.g. `card operation`. */
  readonly name: string;
  /**
   * Its table (registerOperationTable): swept when interrupted, decided by a person when UNKNOWN.
   * Absent for a type whose rows carry more than the table holds and sweep and resolve themselves:
   * pay-in orders (their history, live events and the provider's callbacks, a second source of truth).
   */
  readonly table?: OperationTable;
  readonly log: Logger;
  /** The fields naming it in a log line. */
  describe(stored: Stored): Record<string, unknown>;
  /**
   * Stores it PENDING, before anything is sent, linked to the request's idempotency record in the
   * same statement when there is one (OPERATION_LINK, storedRow).
   */
  store(input: Input, link: OperationLink | undefined): Promise<Stored>;
  /** Writes a failure: FAILED (or its type's word for it) for `refused` and `not_sent`, UNKNOWN for `lost` and `unexpected`. */
  recordFailure(stored: Stored, failure: ProviderFailure, input: Input): Promise<Stored>;
  /**
   * When present, an operation provably not sent is removed instead of recorded (what it holds, a
   * unique payment id, is free again) and the provider error is the request's answer.
   */
  removeNotSent?(stored: Stored): Promise<void>;
  /** The request's answer once a failure is recorded: throw (the provider error, with the operation's id), or return what to answer. */
  answerFailure(recorded: Stored, failure: ProviderFailure): Failed;
}

/** One request's run of an operation: what it asks, the idempotency link, the call, and what the answer does. */
export interface ProviderOperationRequest<Stored, Input, Answer, Result> {
  input: Input;
  link?: OperationLink;
  /** The provider call (the typed client), for the stored PENDING operation. */
  call(stored: Stored): Promise<Answer>;
  /** Records what the provider answered (with what it changes elsewhere, in the same statement) and shapes the result. */
  record(stored: Stored, answer: Answer): Promise<Result>;
}

/**
 * The lifecycle of an operation on the provider: stored PENDING (with its recovery point), the
 * call, then the answer recorded by `record`; or, when the call threw, the failure classified
 * (failureOutcome), recorded by the type (FAILED / UNKNOWN) or the PENDING row removed when nothing
 * was sent, logged, and answered by the type. A process that dies in between leaves the row
 * PENDING for the interrupted-work sweep.
 */
export async function runProviderOperation<Stored extends { id: string }, Input, Answer, Result, Failed>(
  type: ProviderOperationType<Stored, Input, Failed>,
  request: ProviderOperationRequest<Stored, Input, Answer, Result>,
): Promise<Result | Failed> {
  const stored = await type.store(request.input, request.link);
  let answer: Answer;
  try {
    answer = await request.call(stored);
  } catch (error) {
    const failure = failureOutcome(error);
    const context = type.describe(stored);
    if (failure.kind === 'not_sent' && type.removeNotSent) {
      await type.removeNotSent(stored);
      type.log.warn({ ...context, code: failure.error.code }, `${type.name} not sent to the provider; record removed`);
      throw error;
    }
    const recorded = await type.recordFailure(stored, failure, request.input);
    if (failure.kind === 'lost')
      type.log.warn({ ...context, code: failure.code }, `${type.name} outcome unknown: the provider may have acted`);
    else if (failure.kind === 'unexpected')
      type.log.error({ ...context, err: error }, `${type.name} failed unexpectedly after it may have been sent`);
    else type.log.info({ ...context, code: failure.error.code }, `${type.name} failed`);
    return type.answerFailure(recorded, failure);
  }
  return request.record(stored, answer);
}
