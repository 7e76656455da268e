import pino from 'pino';
import type { Database, TransactionRun } from '../database/database';
import {
  AgentBudgetExhaustedError,
  ProviderRejectedError,
  ProviderServerError,
  ProviderTimeoutError,
  ProviderUnreachableError,
} from '../provider/provider.errors';
import { registerOperationTable } from './operation-tables';
import {
  failureOutcome,
  failureRecordOf,
  runProviderOperation,
  type ProviderFailure,
  type ProviderOperationType,
} from './provider-operation';
import { defineRow } from '../database/row-declaration';
import { column } from '../database/sql-statement';
import { resolveProviderOperation } from './resolve-provider-operation';

const DEFINITION = {
  table: 'spec_operations',
  statusType: 'SpecStatus',
  outcomes: { refused: 'NOT_DONE', not_sent: 'NOT_DONE', lost: 'UNKNOWN', unexpected: 'UNKNOWN' },
  recovery: { spec: ['spec.run'] },
  resolution: {
    outcomes: ['DONE', 'NOT_DONE'] as const,
    resolvable: ['UNKNOWN'],
    audit: { action: 'card_operation.resolved', resourceType: 'card_operation' },
    auditDetails: ['kind'],
    notResolvable: { code: 'spec_not_resolvable', noun: 'spec operation' },
  },
  attention: {
    row: defineRow({ id: column.uuid.from('id'), createdAt: column.timestamptz.from('created_at') }),
    queues: [{ name: 'unknown', where: `status = 'UNKNOWN'` }],
  },
} as const;
const TABLE = registerOperationTable(DEFINITION);
/** The same type, but what was not sent is removed. */
const REMOVING_TABLE = registerOperationTable({
  ...DEFINITION,
  table: 'spec_removing_operations',
  outcomes: { ...DEFINITION.outcomes, not_sent: 'removed' },
});

interface Row {
  id: string;
  status: 'PENDING' | 'DONE' | 'NOT_DONE' | 'UNKNOWN';
  kind?: ProviderFailure['kind'];
}

/** A type that keeps its rows in memory; `removes` switches on removeNotSent (and its outcome map's `removed`). */
function memoryType(removes = false) {
  const rows = new Map<string, Row>();
  const links: unknown[] = [];
  const type: ProviderOperationType<Row, string, Row> = {
    name: 'spec operation',
    table: removes ? REMOVING_TABLE : TABLE,
    log: pino({ level: 'silent' }),
    describe: (row) => ({ id: row.id }),
    store: async (input, link) => {
      links.push(link);
      const row: Row = { id: input, status: 'PENDING' };
      rows.set(row.id, row);
      return { ...row };
    },
    recordFailure: async (row, outcome, failure) => {
      const recorded: Row = { id: row.id, status: outcome.status as Row['status'], kind: failure.kind };
      rows.set(row.id, recorded);
      return recorded;
    },
    ...(removes ? { removeNotSent: async (row: Row) => void rows.delete(row.id) } : {}),
    answerFailure: (recorded) => recorded,
  };
  return { type, rows, links };
}

describe('failureOutcome: one classification of provider errors for every operation type', () => {
  it('a refusal: what the provider said, masked, with its body', () => {
    const error = new ProviderRejectedError('success_false', {
      providerStatus: 400,
      providerMessage: 'card 4111111111111111 declined',
      body: { success: false },
    });
    expect(failureOutcome(error)).toEqual({
      kind: 'refused',
      error,
      reason: expect.not.stringContaining('4111111111111111'),
      providerMessage: expect.not.stringContaining('4111111111111111'),
      providerResponse: { success: false },
    });
    expect(failureOutcome(new ProviderRejectedError('non_json', { providerStatus: 400 }))).toMatchObject({
      reason: 'Refused by the payment provider',
      providerResponse: { httpStatus: 400 },
    });
  });

  it.each([new ProviderUnreachableError('connection refused'), new AgentBudgetExhaustedError(5)])('%p proves nothing was sent', (error) => {
    expect(failureOutcome(error)).toEqual({ kind: 'not_sent', error, reason: `Not sent to the payment provider (${error.code})` });
  });

  it.each([new ProviderTimeoutError('no answer in 500 ms'), new ProviderServerError('HTTP 500', { providerStatus: 500 })])(
    '%p: the answer was lost, the provider may have acted',
    (error) => {
      expect(failureOutcome(error)).toMatchObject({ kind: 'lost', error, reason: error.detail, code: error.code });
    },
  );

  it('anything else after the call may have been sent: unexpected (UNKNOWN, never FAILED)', () => {
    const error = new TypeError('bug');
    expect(failureOutcome(error)).toEqual({ kind: 'unexpected', error });
  });
});

describe('failureRecordOf: the one outcome function, by the outcome map of a type', () => {
  const statuses = { refused: 'FAILED', not_sent: 'FAILED', lost: 'UNKNOWN', unexpected: 'UNKNOWN' } as const;

  it('a refusal: its status, reason, message, redacted body and the reference its body carries', () => {
    const error = new ProviderRejectedError('success_false', {
      providerStatus: 400,
      providerMessage: 'no',
      body: { success: false, data: { reference: 'SP1' } },
    });
    expect(failureRecordOf(statuses, failureOutcome(error))).toEqual({
      status: 'FAILED',
      failureReason: 'no',
      providerMessage: 'no',
      providerResponse: { success: false, data: { reference: 'SP1' } },
      providerReference: 'SP1',
    });
  });

  it('a lost answer: UNKNOWN with what was lost; our own failure after the call: UNKNOWN, "failed after it may have been sent"', () => {
    expect(failureRecordOf(statuses, failureOutcome(new ProviderTimeoutError('late')))).toMatchObject({
      status: 'UNKNOWN',
      providerResponse: { error: 'provider_timeout' },
    });
    expect(failureRecordOf(statuses, failureOutcome(new TypeError('bug')))).toEqual({
      status: 'UNKNOWN',
      failureReason: 'The submission failed unexpectedly after it may have been sent',
      providerMessage: null,
      providerResponse: { error: 'internal_error' },
      providerReference: null,
    });
  });

  it('not sent: the mapped status, or nothing when the type removes it', () => {
    const failure = failureOutcome(new ProviderUnreachableError('refused'));
    expect(failureRecordOf(statuses, failure)).toMatchObject({ status: 'FAILED', providerResponse: null });
    expect(failureRecordOf({ ...statuses, not_sent: 'removed' }, failure)).toBeUndefined();
  });
});

describe('runProviderOperation', () => {
  const claim = { id: 'record-1', userId: 'u', scope: 'spec.run', key: 'k', requestHash: 'h', ttlSeconds: 60, leaseMs: 1000 };
  const link = { claim, type: 'spec' };

  it('stores PENDING with the link before the call, then records the answer', async () => {
    const { type, rows, links } = memoryType();
    const seen: string[] = [];
    const result = await runProviderOperation(type, {
      input: 'op-1',
      link,
      call: async (stored) => (seen.push(`call while ${rows.get(stored.id)?.status}`), 'answer'),
      record: async (stored, answer) => ({ ...stored, status: 'DONE' as const, answer }),
    });
    expect(seen).toEqual(['call while PENDING']);
    expect(links).toEqual([link]);
    expect(result).toEqual({ id: 'op-1', status: 'DONE', answer: 'answer' });
  });

  it.each([
    [new ProviderRejectedError('success_false', { providerStatus: 400 }), 'NOT_DONE', 'refused'],
    [new ProviderUnreachableError('refused'), 'NOT_DONE', 'not_sent'],
    [new ProviderTimeoutError('late'), 'UNKNOWN', 'lost'],
    [new Error('bug'), 'UNKNOWN', 'unexpected'],
  ])('%p: the failure is recorded (%s) and answered by the type', async (error, status, kind) => {
    const { type, rows } = memoryType();
    const record = jest.fn();
    const answered = await runProviderOperation(type, { input: 'op-2', call: () => Promise.reject(error), record });
    expect(answered).toEqual({ id: 'op-2', status, kind });
    expect(rows.get('op-2')).toEqual({ id: 'op-2', status, kind });
    expect(record).not.toHaveBeenCalled();
  });

  it('a type that removes what was not sent: the row goes, the provider error is the answer', async () => {
    const { type, rows } = memoryType(true);
    const error = new ProviderUnreachableError('refused');
    await expect(runProviderOperation(type, { input: 'op-3', call: () => Promise.reject(error), record: jest.fn() })).rejects.toBe(error);
    expect(rows.has('op-3')).toBe(false);
  });

  it('a lost answer is never removed, even by such a type', async () => {
    const { type, rows } = memoryType(true);
    await runProviderOperation(type, { input: 'op-4', call: () => Promise.reject(new ProviderTimeoutError('late')), record: jest.fn() });
    expect(rows.get('op-4')).toMatchObject({ status: 'UNKNOWN' });
  });
});

describe('resolveProviderOperation', () => {
  /** A transaction that answers `moved` rows to the guarded UPDATE and records every statement it is sent. */
  function fakePrisma(moved: number) {
    const sent: { name: string; values: unknown[] }[] = [];
    const run = (async (statement: { name: string }, values: unknown[]) => {
      sent.push({ name: statement.name, values });
      if (statement.name === TABLE.resolve?.name) return { rows: [], count: moved };
      const [, action, resourceType, resourceId, requestId, note, details] = values;
      const row = {
        id: 'e',
        at: new Date(),
        actor: 'boss',
        action,
        resourceType,
        resourceId,
        requestId,
        note,
        details: JSON.parse(String(details)),
      };
      return { rows: [row], count: 1 };
    }) as unknown as TransactionRun;
    const prisma = { inTransaction: <T>(work: (r: TransactionRun) => Promise<T>) => work(run) } as unknown as Database;
    return { prisma, sent };
  }
  const audit = {
    actor: 'boss',
    action: 'card_operation.resolved' as const,
    resourceType: 'card_operation' as const,
    resourceId: 'op',
    requestId: null,
    note: 'checked',
    details: { kind: 'TOPUP' },
  };

  it('only UNKNOWN moves: the guarded UPDATE, what else the decision writes, and the audit event, in one transaction', async () => {
    const { prisma, sent } = fakePrisma(1);
    const also = jest.fn(async () => undefined);
    expect(await resolveProviderOperation(prisma, TABLE, 'op', { status: 'NOT_DONE', actor: 'boss', note: 'checked' }, audit, also)).toBe(
      true,
    );
    expect(sent.map((s) => s.name)).toEqual(['resolve_spec_operations', 'audit_append']);
    expect(sent[0].values).toEqual(['op', 'NOT_DONE', expect.stringMatching(/Decided NOT_DONE by a person/), 'boss', 'checked']);
    expect(JSON.parse(String(sent[1].values[6]))).toEqual({ kind: 'TOPUP', fromStatus: 'UNKNOWN', toStatus: 'NOT_DONE' });
    expect(also).toHaveBeenCalledTimes(1);
  });

  it('decided meanwhile (the guard refused): false, nothing else written', async () => {
    const { prisma, sent } = fakePrisma(0);
    const also = jest.fn(async () => undefined);
    expect(await resolveProviderOperation(prisma, TABLE, 'op', { status: 'DONE', actor: 'boss', note: 'n' }, audit, also)).toBe(false);
    expect(sent.map((s) => s.name)).toEqual(['resolve_spec_operations']);
    expect(sent[0].values[2]).toBeNull();
    expect(also).not.toHaveBeenCalled();
  });
});
