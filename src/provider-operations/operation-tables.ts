import type { AuditAction, AuditResourceType } from '../audit/audit.types';
import { column, sqlStatement, type SqlStatement } from '../database/sql-statement';
import { IdempotencyInProgressError } from '../idempotency/idempotency.errors';
import type { IdempotencyLink } from '../idempotency/idempotency.repository';

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
 * The first CTE of a statement that stores an operation PENDING, linked to the idempotency record
 * of the request in the same statement (the recovery point): `$1` is the new row's id (made by the
 * caller), `$2` the idempotency record (NULL when the request has none), `$3` the resource type
 * the record will name. The INSERT that follows selects its row `WHERE ${LINK_HELD}`: when the
 * record is no longer the request's (a retry claimed it), nothing is stored and no row comes back.
 */
export const IDEMPOTENCY_LINK = `link AS (
    UPDATE idempotency_records SET resource_type = $3::text, resource_id = $1::uuid
    WHERE $2::uuid IS NOT NULL AND id = $2::uuid AND state = 'in_progress'
    RETURNING id
  )`;

/** The condition of the INSERT after IDEMPOTENCY_LINK. */
export const LINK_HELD = `($2::uuid IS NULL OR EXISTS (SELECT 1 FROM link))`;

/** `$1` to `$3` of a statement starting with IDEMPOTENCY_LINK. */
export function linkValues(id: string, link: IdempotencyLink | undefined): [string, string | null, string | null] {
  return [id, link?.recordId ?? null, link?.type ?? null];
}

/** The row a linked insert stored; none means the request lost its idempotency record to a retry (409, nothing stored). */
export function storedRow<Row>(rows: readonly Row[]): Row {
  const [row] = rows;
  if (!row) throw new IdempotencyInProgressError();
  return row;
}
