import type { Logger } from 'pino';
import { maskCardNumbersIn, redact } from '../logging/redaction';
import { providerErrorOf, ProviderError, ProviderRejectedError, provesNotSent } from '../provider/provider.errors';
import type { FailureStatuses, OperationLink, OperationTable } from './operation-tables';

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

/** What the failure reason says of an operation whose own code failed after the call may have been sent. */
export const UNEXPECTED_FAILURE_REASON = 'The submission failed unexpectedly after it may have been sent';

/**
 * A failure as the row of any operation type records it: the status its outcome map gives the
 * failure's kind, the reason, the provider's message, what the provider answered (its redacted
 * body when it refused) or what was lost (`{ error, httpStatus?, message? }`), and the reference a
 * refusal's body may carry (`data.reference`).
 */
export interface FailureRecord<Failed extends string> {
  status: Failed;
  failureReason: string;
  providerMessage: string | null;
  providerResponse: unknown;
  providerReference: string | null;
}

/**
 * The one outcome function: what a failure makes of an operation of a type, by its outcome map
 * (`FailureStatuses`, declared with its table). Undefined when the type removes what was not sent.
 */
export function failureRecordOf<Failed extends string>(
  statuses: FailureStatuses<Failed>,
  failure: ProviderFailure,
): FailureRecord<Failed> | undefined {
  const status = statuses[failure.kind];
  if (status === 'removed') return undefined;
  const none = { providerMessage: null, providerResponse: null, providerReference: null };
  switch (failure.kind) {
    case 'refused': {
      const reference = (failure.error.body as { data?: { reference?: unknown } } | null | undefined)?.data?.reference;
      return {
        status,
        failureReason: failure.reason,
        providerMessage: failure.providerMessage,
        providerResponse: failure.providerResponse,
        providerReference: typeof reference === 'string' ? reference : null,
      };
    }
    case 'not_sent':
      return { ...none, status, failureReason: failure.reason };
    case 'lost':
      return {
        ...none,
        status,
        failureReason: failure.reason,
        providerMessage: failure.providerMessage,
        providerResponse: {
          error: failure.code,
          ...(failure.httpStatus ? { httpStatus: failure.httpStatus } : {}),
          ...(failure.providerMessage ? { message: failure.providerMessage } : {}),
        },
      };
    case 'unexpected':
      return { ...none, status, failureReason: UNEXPECTED_FAILURE_REASON, providerResponse: { error: 'internal_error' } };
  }
}

/**
 * One kind of operation on the provider, as the lifecycle drives it (docs/guides/adding-a-provider-operation.md).
 * `Stored` is its record, `Input` what a request asks (stored PENDING before the call), `Failed` what
 * a request whose call failed answers once the failure is recorded (`never` when it always throws).
 */
export interface ProviderOperationType<Stored extends { id: string }, Input, Failed = never, FailedStatus extends string = string> {
  /** Its name in log lines, e.g. `card operation`. */
  readonly name: string;
  /** Its table (registerOperationTable), with its outcome map: what each failure makes of it. */
  readonly table: OperationTable<FailedStatus>;
  readonly log: Logger;
  /** The fields naming it in a log line. */
  describe(stored: Stored): Record<string, unknown>;
  /**
   * Stores it PENDING, before anything is sent, linked to the request's idempotency record in the
   * same statement when there is one (OPERATION_LINK, storedRow).
   */
  store(input: Input, link: OperationLink | undefined): Promise<Stored>;
  /** Writes a failure as its outcome map made it (failureRecordOf): FAILED (or its type's word) or UNKNOWN. */
  recordFailure(stored: Stored, outcome: FailureRecord<FailedStatus>, failure: ProviderFailure, input: Input): Promise<Stored>;
  /** Removes an operation provably not sent, for a type whose outcome map says `not_sent: 'removed'`. */
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
 * (failureOutcome) and made an outcome by the type's outcome map (failureRecordOf), recorded by the
 * type (FAILED / UNKNOWN) or the PENDING row removed when nothing was sent, logged, and answered by the type. A process that dies in between leaves the row
 * PENDING for the interrupted-work sweep.
 */
export async function runProviderOperation<Stored extends { id: string }, Input, Answer, Result, Failed, FailedStatus extends string>(
  type: ProviderOperationType<Stored, Input, Failed, FailedStatus>,
  request: ProviderOperationRequest<Stored, Input, Answer, Result>,
): Promise<Result | Failed> {
  const stored = await type.store(request.input, request.link);
  let answer: Answer;
  try {
    answer = await request.call(stored);
  } catch (error) {
    const failure = failureOutcome(error);
    const context = type.describe(stored);
    const outcome = failureRecordOf(type.table.outcomes, failure);
    if (!outcome) {
      if (failure.kind !== 'not_sent' || !type.removeNotSent)
        throw new Error(`${type.name}: only what was not sent can be removed`, { cause: error });
      await type.removeNotSent(stored);
      type.log.warn({ ...context, code: failure.error.code }, `${type.name} not sent to the provider; record removed`);
      throw error;
    }
    const recorded = await type.recordFailure(stored, outcome, failure, request.input);
    if (failure.kind === 'lost')
      type.log.warn({ ...context, code: failure.code }, `${type.name} outcome unknown: the provider may have acted`);
    else if (failure.kind === 'unexpected')
      type.log.error({ ...context, err: error }, `${type.name} failed unexpectedly after it may have been sent`);
    else type.log.info({ ...context, code: failure.error.code }, `${type.name} failed`);
    return type.answerFailure(recorded, failure);
  }
  return request.record(stored, answer);
}
