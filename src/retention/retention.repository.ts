import { Injectable } from '@nestjs/common';
import { ADVISORY_LOCKS, tryTransactionLock } from '../database/advisory-locks';
import { Database } from '../database/database';
import { column, sqlStatement } from '../database/sql-statement';
import { PURGE_STATEMENT_TIMEOUT_MS } from '../database/transaction-limits';
import type { PruneCounts } from './retention-tables';

const repository = 'retention.repository';

/**
 * The oldest expired calls first, by the created_at index; rows another transaction holds are
 * skipped. Row locks only: inserts of new calls never wait for it.
 */
const PRUNE_PROVIDER_CALLS = sqlStatement(
  repository,
  'pruneBatchAsLeader',
  'retention_prune_provider_calls',
  `
  DELETE FROM provider_calls WHERE id IN (
    SELECT id FROM provider_calls
    WHERE created_at < now() - make_interval(days => $1::int)
    ORDER BY created_at
    LIMIT $2::int
    FOR UPDATE SKIP LOCKED)`,
);

/**
 * Expired events whose every delivery is final: DELIVERED or FAILED, or PENDING towards a DISABLED
 * endpoint (which receives nothing). A delivery made within the retention period (a redelivery)
 * keeps its event. A deleted endpoint's deliveries went with it. The event rows are locked, so
 * that a redelivery being written for one of them is skipped, not orphaned.
 */
const PRUNE_EVENTS = sqlStatement(
  repository,
  'pruneBatchAsLeader',
  'retention_prune_events',
  `
  WITH expired AS (
    SELECT e.id FROM events e
    WHERE e.created_at < now() - make_interval(days => $1::int)
      AND NOT EXISTS (
        SELECT 1 FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
        WHERE d.event_id = e.id
          AND ((d.status = 'PENDING' AND w.status = 'ENABLED') OR d.created_at >= now() - make_interval(days => $1::int)))
    ORDER BY e.created_at
    LIMIT $2::int
    FOR UPDATE OF e SKIP LOCKED
  ), doomed_deliveries AS (
    SELECT d.id FROM webhook_deliveries d WHERE d.event_id IN (SELECT id FROM expired)
  ), deleted_attempts AS (
    DELETE FROM webhook_attempts a WHERE a.delivery_id IN (SELECT id FROM doomed_deliveries) RETURNING 1
  ), deleted_deliveries AS (
    DELETE FROM webhook_deliveries d WHERE d.id IN (SELECT id FROM doomed_deliveries) RETURNING 1
  ), deleted_events AS (
    DELETE FROM events e WHERE e.id IN (SELECT id FROM expired) RETURNING 1
  )
  SELECT (SELECT count(*) FROM deleted_events)::int AS events,
         (SELECT count(*) FROM deleted_deliveries)::int AS deliveries,
         (SELECT count(*) FROM deleted_attempts)::int AS attempts`,
  { events: column.int4, deliveries: column.int4, attempts: column.int4 },
);

export type PrunedKind = 'provider_calls' | 'events';

/** Deletes expired operational records, one short transaction per batch. Knows no other table. */
@Injectable()
export class RetentionRepository {
  constructor(private readonly database: Database) {}

  /**
   * One batch of `kind` older than `olderThanDays`, under the retention lock: `leader` false (and
   * nothing deleted) when another instance holds it.
   */
  async pruneBatchAsLeader(
    kind: PrunedKind,
    olderThanDays: number,
    batchSize: number,
  ): Promise<{ leader: boolean; deleted: Partial<PruneCounts>; full: boolean }> {
    return this.database.inTransaction(
      async (run) => {
        if (!(await tryTransactionLock(run, ADVISORY_LOCKS.dataRetention))) return { leader: false, deleted: {}, full: false };
        if (kind === 'provider_calls') {
          const { count } = await run(PRUNE_PROVIDER_CALLS, [olderThanDays, batchSize]);
          return { leader: true, deleted: { provider_calls: count }, full: count >= batchSize };
        }
        const {
          rows: [pruned],
        } = await run(PRUNE_EVENTS, [olderThanDays, batchSize]);
        return {
          leader: true,
          deleted: { events: pruned.events, webhook_deliveries: pruned.deliveries, webhook_attempts: pruned.attempts },
          full: pruned.events >= batchSize,
        };
      },
      { statementTimeoutMs: PURGE_STATEMENT_TIMEOUT_MS },
    );
  }
}
