import type { AuditAction, AuditResourceType } from '../audit/audit.types';
import type { RowFields } from '../database/row-declaration';
import { column, sqlStatement, type SqlStatement } from '../database/sql-statement';
import { IdempotencyInProgressError } from '../idempotency/idempotency.errors';
import { idempotencyLinkCte, idempotencyLinkValues, type IdempotencyClaim } from '../idempotency/idempotency.repository';
import { attentionStatements, type AttentionDefinition, type AttentionStatements } from './attention-statements';

/** What an operation interrupted between its provider call and the write of the answer is marked with. */
export const INTERRUPTED_REASON = 'Sent to the provider, but its answer was never recorded (the service stopped)';

/**
 * The outcome map of an operation type: the status each kind of failure (failureOutcome) leaves it
 * in. `not_sent` may be `removed`: the PENDING row is deleted (what it holds, a unique payment id,
 * is free again) and the provider error is the request's answer. `unexpected` is our own code
 * failing after the call may have been sent: never a failure, the provider may have acted.
 */
export interface FailureStatuses<Failed extends string> {
  refused: Failed;
  not_sent: Failed | 'removed';
  lost: Failed;
  unexpected: Failed;
}

/** When and how a person may decide an operation the provider left undecided (ResolveOperationUseCase). */
export interface ResolutionRules<Decided extends string> {
  /** What a person may decide it was: first the provider did it, then it did not. */
  outcomes: readonly [done: Decided, notDone: Decided];
  /** The statuses a person may decide from. */
  resolvable: readonly string[];
  /** A PENDING one too, once older than the interrupted-work window (its process died before or while asking). */
  stalePending?: boolean;
  /** The audit event of a decision. */
  audit: { action: AuditAction; resourceType: AuditResourceType };
  /** The fields of the operation's record the audit event keeps in its details. */
  auditDetails: readonly string[];
  /** The 409 when it may not be decided: its code, and what the operation is called in its text. */
  notResolvable: { code: string; noun: string };
}

/**
 * An operation type as the lifecycle knows it, declared once (registerOperationTable): its table,
 * what each failure makes of it, how a retry of a request that died answers it, who may decide it
 * and how, and where it waits for a person. Its rows have `id` (uuid), `status` (a PostgreSQL enum
 * with PENDING and UNKNOWN) and `created_at`; a table the lifecycle sweeps and resolves also has
 * `completed_at`, `failure_reason`, `resolved_by`, `resolution_note` and `resolved_at`.
 */
export interface OperationTableDefinition<
  Failed extends string,
  Decided extends string,
  Resource extends string,
  Fields extends RowFields,
> {
  /** The table, e.g. `card_operations`; its attention report key is its camelCase name (`cardOperations`). */
  table: string;
  /** The PostgreSQL enum of its `status` column, e.g. `CardOperationStatus`. */
  statusType: string;
  /** What each failure of the provider call makes of it (failureRecordOf). */
  outcomes: FailureStatuses<Failed>;
  /**
   * Recovery: the idempotency resource types its rows are linked as (operationLink), each with the
   * `@Idempotent` scopes whose retries it answers (registerRecoveries).
   */
  recovery: Readonly<Record<Resource, readonly string[]>>;
  resolution: ResolutionRules<Decided>;
  /** Its queues of the attention report (GET /v1/reports/attention) and the rows they show. */
  attention: AttentionDefinition<Fields>;
  /**
   * Its interrupted-work sweep and the write of a decision are its area's, not written out here:
   * pay-in orders (history entries, live events, callbacks as a second writer, expiry in the same sweep).
   */
  ownSweepAndResolution?: true;
}

/** A registered operation type: its definition (its attention rows as its statements declare them) and what is written out from it. */
export interface OperationTable<
  Failed extends string = string,
  Decided extends string = string,
  Resource extends string = string,
> extends Omit<OperationTableDefinition<Failed, Decided, Resource, RowFields>, 'attention'> {
  /** Its key in the attention report: the camelCase table name. */
  readonly reportKey: string;
  /** PENDING rows older than `$2` seconds become UNKNOWN with the reason `$1` (the interrupted-work sweep); none when ownSweepAndResolution. */
  readonly markInterrupted?: SqlStatement;
  /** The guarded decision of a person: only an UNKNOWN row moves ($1 id, $2 status, $3 failure reason, $4 actor, $5 note). */
  readonly resolve?: SqlStatement<{ id: string }>;
  /** Its attention queues' statements. */
  readonly attention: AttentionStatements;
}

const registry = new Map<string, OperationTable>();

/**
 * Declares an operation type, once, where its repository declares its statements (module scope,
 * so that `npm run sql:queries` and the statement-shapes test see what is written out): its sweep
 * and resolution statements and its attention statements are written out from the definition; the
 * interrupted-work sweep, the resolution use case, the recovery of idempotent retries and the
 * attention report read every registered type.
 */
export function registerOperationTable<Failed extends string, Decided extends string, Resource extends string, Fields extends RowFields>(
  definition: OperationTableDefinition<Failed, Decided, Resource, Fields>,
): OperationTable<Failed, Decided, Resource> {
  const { table, statusType } = definition;
  const registered: OperationTable<Failed, Decided, Resource> = {
    ...definition,
    reportKey: table.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()),
    attention: attentionStatements(table, definition.attention),
    ...(definition.ownSweepAndResolution
      ? {}
      : {
          markInterrupted: sqlStatement(
            'interrupted-work',
            'InterruptedOperationsSweepJob',
            `interrupted_${table}`,
            `
            UPDATE "${table}"
            SET status = 'UNKNOWN', completed_at = now(), failure_reason = $1
            WHERE status = 'PENDING' AND created_at < now() - make_interval(secs => $2::float8)`,
          ),
          resolve: sqlStatement(
            'provider-operations',
            'resolveProviderOperation',
            `resolve_${table}`,
            `
            UPDATE "${table}"
            SET status = $2::"${statusType}", failure_reason = $3::text, resolved_by = $4::text, resolution_note = $5::text, resolved_at = now()
            WHERE id = $1::uuid AND status = 'UNKNOWN'
            RETURNING id`,
            { id: column.uuid },
          ),
        }),
  };
  registry.set(table, registered);
  return registered;
}

/** Every operation table registered by the modules loaded so far, in the order of their tables' names. */
export function registeredOperationTables(): OperationTable[] {
  return [...registry.values()].sort((a, b) => a.table.localeCompare(b.table));
}

/**
 * What links a stored operation to the request's idempotency record (its recovery point): the
 * request's claim of its key (`IdempotencyService.pendingClaim()`), and the resource type the record
 * will name (one of its table's `recovery` types: operationLink).
 */
export interface OperationLink {
  claim: IdempotencyClaim;
  type: string;
}

/**
 * The first CTE of a statement that stores an operation PENDING linked to the request's
 * idempotency record in the same statement: the idempotency area's one link (idempotencyLinkCte),
 * its parameters `$2` to `$10`; `$1` is the new row's id. The INSERT that follows selects its row
 * `WHERE ${LINK_HELD}`: when the record is no longer the request's (a retry took it over), nothing
 * is stored and no row comes back (storedRow). Values: linkedInsertValues.
 */
export const OPERATION_LINK = idempotencyLinkCte(2);

/** The condition of the INSERT after OPERATION_LINK. */
export const LINK_HELD = `($2::uuid IS NULL OR EXISTS (SELECT 1 FROM link))`;

/** `$1` to `$10` of a statement starting with OPERATION_LINK: the new row's id, then its link (all NULL without one). */
export function linkedInsertValues(id: string, link: OperationLink | undefined): unknown[] {
  return [id, ...idempotencyLinkValues(link?.claim, { type: link?.type ?? '', id })];
}

/** The row a linked insert stored; none means the request lost its idempotency record to a retry (409, nothing stored). */
export function storedRow<Row>(rows: readonly Row[]): Row {
  const [row] = rows;
  if (!row) throw new IdempotencyInProgressError();
  return row;
}
