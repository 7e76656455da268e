import type { AuditAction, AuditResourceType } from '../audit/audit.types';
import { column, sqlStatement, type SqlStatement } from '../database/sql-statement';
import { IdempotencyInProgressError } from '../idempotency/idempotency.errors';
import { idempotencyLinkCte, idempotencyLinkValues, type IdempotencyClaim } from '../idempotency/idempotency.repository';

/** What an operation interrupted between its provider call and the write of the answer is marked with. */
export const INTERRUPTED_REASON = 'Sent to the provider, but its answer was never recorded (the service stopped)';

/**
 * The table of an operation type, as the lifecycle needs it. Its rows have `id` (uuid), `status`
 * (a PostgreSQL enum with PENDING and UNKNOWN), `created_at`, `completed_at`, `failure_reason`,
 * and a person's decision: `resolved_by`, `resolution_note`, `resolved_at`.
 */
export interface OperationTableDefinition<Decided extends string> {
  /** The table, e.g. `card_operations`. */
  table: string;
  /** The PostgreSQL enum of its `status` column, e.g. `CardOperationStatus`. */
  statusType: string;
  /** What a person may decide an UNKNOWN operation was: first the provider did it, then it did not. */
  manualOutcomes: readonly [done: Decided, notDone: Decided];
  /** The audit event of such a decision. */
  resolutionAudit: { action: AuditAction; resourceType: AuditResourceType };
}

export interface OperationTable<Decided extends string = string> extends OperationTableDefinition<Decided> {
  /** PENDING rows older than `$2` seconds become UNKNOWN with the reason `$1` (the interrupted-work sweep). */
  readonly markInterrupted: SqlStatement;
  /** The guarded decision of a person: only an UNKNOWN row moves ($1 id, $2 status, $3 failure reason, $4 actor, $5 note). */
  readonly resolve: SqlStatement<{ id: string }>;
}

const registry = new Map<string, OperationTable>();

/**
 * Declares the table of an operation type, once, where its repository declares its statements
 * (module scope): its sweep and resolution statements are written out from the definition, and the
 * interrupted-work sweep (InterruptedOperationsSweepJob) sweeps every registered table.
 */
export function registerOperationTable<Decided extends string>(definition: OperationTableDefinition<Decided>): OperationTable<Decided> {
  const { table, statusType } = definition;
  const registered: OperationTable<Decided> = {
    ...definition,
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
  };
  registry.set(table, registered);
  return registered;
}

/** Every operation table registered by the modules loaded so far. */
export function registeredOperationTables(): OperationTable[] {
  return [...registry.values()];
}

/**
 * What links a stored operation to the request's idempotency record (its recovery point): the
 * request's claim of its key (`IdempotencyService.pendingClaim()`), and the resource type the record
 * will name (how a retry of a request that died answers it, `registerRecovery`).
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
