import { PURGE_STATEMENT_TIMEOUT_MS } from '../database/transaction-limits';
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Database, type TransactionRun } from '../database/database';
import { ADVISORY_LOCKS, tryTransactionLock } from '../database/advisory-locks';
import { column, sqlStatement, type RowOf } from '../database/sql-statement';
import { IdempotencyInProgressError } from './idempotency.errors';

export type IdempotencyState = 'in_progress' | 'completed';

export interface IdempotencyRecord {
  id: string;
  userId: string;
  scope: string;
  key: string;
  requestHash: string;
  state: IdempotencyState;
  responseStatus: number | null;
  responseBody: unknown;
  expiresAt: Date;
  /** In progress and its lease has lapsed (by the database clock): the request that held it is presumed dead. */
  leaseLapsed: boolean;
  /** The resource the request created, linked in the transaction that created it (its recovery point). */
  resourceType: string | null;
  resourceId: string | null;
}

/** What a request created, as linked to its record: answered to a retry once the request is presumed dead. */
export interface IdempotentResource {
  type: string;
  id: string;
}

/** Which idempotency record to link a resource to, and as what (the type names how a retry answers it). */
export interface IdempotencyLink {
  recordId: string;
  type: string;
}

export type InsertOutcome =
  | { created: true; record: IdempotencyRecord }
  /** `record` is undefined when the holder vanished between the insert and the read (released or expired). */
  | { created: false; record: IdempotencyRecord | undefined };

/** A key claimed by a statement of its own (IdempotencyRepository.insertOrGet), its record's id made there. */
export type NewIdempotencyRecord = Omit<IdempotencyClaim, 'id'>;

// Lapsed is judged by the database clock, shared by every instance. A record without a lease (written
// before leases existed) never lapses: it keeps the old rule and waits for its expiry.
const COLUMNS = `id, user_id AS "userId", scope, key, request_hash AS "requestHash", state,
  response_status AS "responseStatus", response_body AS "responseBody", expires_at AS "expiresAt",
  (state = 'in_progress' AND lease_until IS NOT NULL AND lease_until <= now()) AS "leaseLapsed",
  resource_type AS "resourceType", resource_id AS "resourceId"`;
const RECORD_COLUMNS = {
  id: column.uuid,
  userId: column.text,
  scope: column.text,
  key: column.text,
  requestHash: column.text,
  state: column.text,
  responseStatus: column.int4.orNull,
  responseBody: column.jsonb.orNull,
  expiresAt: column.timestamptz,
  leaseLapsed: column.bool,
  resourceType: column.text.orNull,
  resourceId: column.uuid.orNull,
};

/** The SQL of IdempotencyRepository, written out (listed in src/queries/idempotency.repository.sql). */
const repository = 'idempotency.repository';

/** The hot path of every idempotent request: its claim, and its answer. */
const CLAIM = sqlStatement(
  repository,
  'insertOrGet',
  'idempotency_claim',
  `
  INSERT INTO idempotency_records (id, user_id, scope, key, request_hash, state, created_at, expires_at, lease_until)
  VALUES ($1::uuid, $2, $3, $4, $5, 'in_progress', now(), now() + make_interval(secs => $6::float8),
          now() + make_interval(secs => $7::float8))
  ON CONFLICT (user_id, scope, key) DO UPDATE
    SET id = EXCLUDED.id, request_hash = EXCLUDED.request_hash, state = EXCLUDED.state, response_status = NULL,
        response_body = NULL, created_at = EXCLUDED.created_at, completed_at = NULL, expires_at = EXCLUDED.expires_at,
        lease_until = EXCLUDED.lease_until, resource_type = NULL, resource_id = NULL
    WHERE idempotency_records.expires_at <= now()
  RETURNING ${COLUMNS}`,
  RECORD_COLUMNS,
);

const FIND = sqlStatement(
  repository,
  'insertOrGet, find',
  'idempotency_find',
  `
  SELECT ${COLUMNS} FROM idempotency_records
  WHERE user_id = $1 AND scope = $2 AND key = $3 AND expires_at > now()`,
  RECORD_COLUMNS,
);

const CLAIM_LAPSED = sqlStatement(
  repository,
  'claimLapsed',
  'idempotency_claim_lapsed',
  `
  UPDATE idempotency_records
  SET id = $2::uuid, lease_until = now() + make_interval(secs => $3::float8), resource_type = NULL, resource_id = NULL
  WHERE id = $1::uuid AND state = 'in_progress' AND lease_until <= now() AND expires_at > now()
    AND resource_id IS NOT DISTINCT FROM $4::uuid
  RETURNING ${COLUMNS}`,
  RECORD_COLUMNS,
);

/** Sent while the request runs (the interceptor renews the lease on a timer). */
const RENEW_LEASE = sqlStatement(
  repository,
  'renewLease',
  'idempotency_renew_lease',
  `
  UPDATE idempotency_records SET lease_until = now() + make_interval(secs => $2::float8)
  WHERE id = $1::uuid AND state = 'in_progress'`,
);

const RELEASE = sqlStatement(
  repository,
  'release',
  'idempotency_release',
  `
  DELETE FROM idempotency_records WHERE id = $1::uuid AND state = 'in_progress'`,
);

const PURGE = sqlStatement(
  repository,
  'tryPurgeAsLeader',
  'idempotency_purge',
  `
  DELETE FROM idempotency_records WHERE expires_at < now()`,
);

const COMPLETE = sqlStatement(
  repository,
  'complete',
  'idempotency_complete',
  `
  UPDATE idempotency_records
  SET state = 'completed', response_status = $2, response_body = to_jsonb($3::text), completed_at = now(), lease_until = NULL
  WHERE id = $1::uuid AND state = 'in_progress'`,
);

/**
 * The request's claim of its key, as the statement that creates its resource writes it: for a
 * route whose claim waits for that statement (`claimInResourceStatement`), and for a request that
 * claimed its key already, whose values are the same (its record's).
 */
export interface IdempotencyClaim {
  id: string;
  userId: string;
  scope: string;
  key: string;
  requestHash: string;
  ttlSeconds: number;
  leaseMs: number;
}

/**
 * The one way a resource is linked to the idempotency record of the request creating it: a CTE
 * named `link`, for the statement that inserts the resource, so that the resource never exists
 * without its link (the recovery point of a retry after a crash). It writes the record as the
 * request's: inserted when the request has not claimed its key yet (its claim and its resource in
 * one round trip), taken over when the key's record expired, updated when it is already this
 * request's record (same id, still in progress). A record held by another request (a retry took
 * it over after this request's lease lapsed) is left alone and `link` is empty: the statement must
 * then store nothing (`WHERE $first IS NULL OR EXISTS (SELECT 1 FROM link)`). Parameters
 * `$first` to `$first + 8`: idempotencyLinkValues. With no claim (`$first` NULL) `link` is empty.
 */
export function idempotencyLinkCte(first: number): string {
  const p = (offset: number) => `$${first + offset}`;
  return `link AS (
    INSERT INTO idempotency_records AS r (id, user_id, scope, key, request_hash, state, created_at, expires_at, lease_until,
                                           resource_type, resource_id)
    SELECT ${p(0)}::uuid, ${p(1)}::text, ${p(2)}::text, ${p(3)}::text, ${p(4)}::text, 'in_progress', now(),
           now() + make_interval(secs => ${p(5)}::float8), now() + make_interval(secs => ${p(6)}::float8), ${p(7)}::text, ${p(8)}::uuid
    WHERE ${p(0)}::uuid IS NOT NULL
    ON CONFLICT (user_id, scope, key) DO UPDATE
      SET id = EXCLUDED.id, request_hash = EXCLUDED.request_hash, state = 'in_progress', response_status = NULL,
          response_body = NULL, completed_at = NULL, resource_type = EXCLUDED.resource_type, resource_id = EXCLUDED.resource_id,
          created_at = CASE WHEN r.id = EXCLUDED.id THEN r.created_at ELSE EXCLUDED.created_at END,
          expires_at = CASE WHEN r.id = EXCLUDED.id THEN r.expires_at ELSE EXCLUDED.expires_at END,
          lease_until = EXCLUDED.lease_until
      WHERE r.expires_at <= now() OR (r.id = EXCLUDED.id AND r.state = 'in_progress')
    RETURNING r.id
  )`;
}

/** The parameters of idempotencyLinkCte: the claim (or nulls), then what it links. */
export function idempotencyLinkValues(claim: IdempotencyClaim | undefined, resource: IdempotentResource): unknown[] {
  if (!claim) return [null, null, null, null, null, null, null, null, null];
  return [
    claim.id,
    claim.userId,
    claim.scope,
    claim.key,
    claim.requestHash,
    claim.ttlSeconds,
    claim.leaseMs / 1000,
    resource.type,
    resource.id,
  ];
}

/**
 * The one way a handler stores its answer with its last write (IdempotencyService.inlineAnswer):
 * a CTE named `answer` for that write's statement, completing the record as COMPLETE does when
 * `condition` holds (a condition on the statement's other CTEs: the write went as the answer says).
 * `$status` and `$record` are its parameters; `bodyText` is the SQL of the answer's JSON text.
 */
export function idempotencyAnswerCte(status: string, record: string, bodyText: string, condition: string): string {
  return `answer AS (
    UPDATE idempotency_records
    SET state = 'completed', response_status = ${status}::int, response_body = to_jsonb((${bodyText})::text), completed_at = now(),
        lease_until = NULL
    WHERE ${record}::uuid IS NOT NULL AND id = ${record}::uuid AND state = 'in_progress' AND (${condition})
    RETURNING id
  )`;
}

const LINK = sqlStatement(
  repository,
  'linkIdempotentResource',
  'idempotency_link',
  `
  WITH ${idempotencyLinkCte(1)}
  SELECT id FROM link`,
  { id: column.uuid },
);

/**
 * Links a resource to the request's record inside the caller's transaction (the one that inserts
 * the resource), for a resource stored by several statements; a single-statement store embeds
 * idempotencyLinkCte instead. A record no longer this request's fails here, and the transaction
 * rolls back, instead of creating the resource a second time next to the retry's.
 */
export async function linkIdempotentResource(run: TransactionRun, claim: IdempotencyClaim, resource: IdempotentResource): Promise<void> {
  const { rows } = await run(LINK, idempotencyLinkValues(claim, resource));
  if (rows.length !== 1) throw new IdempotencyInProgressError();
}

/**
 * The answer is kept as its JSON text, in a jsonb string: a jsonb object would reorder its
 * members, and a replay must be the very bytes of the first answer.
 */
function fromRow(row: RowOf<typeof RECORD_COLUMNS>): IdempotencyRecord {
  const stored = row.responseBody;
  const state = row.state === 'completed' ? 'completed' : row.state === 'in_progress' ? 'in_progress' : undefined;
  if (!state) throw new Error(`idempotency record ${row.id} is in an unknown state`);
  return { ...row, state, responseBody: typeof stored === 'string' ? JSON.parse(stored) : stored };
}

/**
 * The idempotency records. Every time comparison uses the database clock, shared by all
 * instances; the unique (user_id, scope, key) constraint is what makes "first request wins" hold
 * across instances.
 */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly database: Database) {}

  /**
   * Claims (userId, scope, key) for a new request, or returns the live record holding it. An
   * expired record that the purge has not removed yet is taken over in the same statement, so an
   * expired key is reusable whether or not the purge already ran.
   */
  async insertOrGet(input: NewIdempotencyRecord): Promise<InsertOutcome> {
    const inserted = await this.database.run(CLAIM, [
      randomUUID(),
      input.userId,
      input.scope,
      input.key,
      input.requestHash,
      input.ttlSeconds,
      input.leaseMs / 1000,
    ]);
    if (inserted[0]) return { created: true, record: fromRow(inserted[0]) };
    return { created: false, record: await this.find(input.userId, input.scope, input.key) };
  }

  /** The live (not expired) record of a key, if any. */
  async find(userId: string, scope: string, key: string): Promise<IdempotencyRecord | undefined> {
    const [row] = await this.database.run(FIND, [userId, scope, key]);
    return row && fromRow(row);
  }

  /**
   * Takes over a record whose lease lapsed and that links no resource (or one that no longer
   * exists): the caller runs the request anew under the record's new id. Atomic: of two retries
   * claiming the same lapsed record, only one gets it (the other finds the id changed); a request
   * still alive and linking its resource meanwhile makes the claim fail (the link comes first) or
   * fails itself (the claim comes first).
   */
  async claimLapsed(record: Pick<IdempotencyRecord, 'id' | 'resourceId'>, leaseMs: number): Promise<IdempotencyRecord | undefined> {
    const [row] = await this.database.run(CLAIM_LAPSED, [record.id, randomUUID(), leaseMs / 1000, record.resourceId]);
    return row && fromRow(row);
  }

  /** Extends the lease of a request still running. False when the record is no longer this request's. */
  async renewLease(record: Pick<IdempotencyRecord, 'id'>, leaseMs: number): Promise<boolean> {
    const { count: renewed } = await this.database.runCounted(RENEW_LEASE, [record.id, leaseMs / 1000]);
    return renewed === 1;
  }

  /**
   * Stores the answer of the request that holds the record. False when the record is no longer
   * this request's (it expired and was taken over or purged meanwhile): the answer is then not kept.
   */
  async complete(record: Pick<IdempotencyRecord, 'id'>, status: number, body: unknown): Promise<boolean> {
    const { count: updated } = await this.database.runCounted(COMPLETE, [record.id, status, JSON.stringify(body ?? null)]);
    return updated === 1;
  }

  /** Frees the key of a request that never started executing, so that a corrected retry can run. */
  async release(record: Pick<IdempotencyRecord, 'id'>): Promise<void> {
    await this.database.run(RELEASE, [record.id]);
  }

  /**
   * Purges expired records unless another instance is purging right now: the transaction-scoped
   * advisory lock is taken without waiting, so instances never queue behind each other for a chore
   * that one of them is already doing.
   */
  async tryPurgeAsLeader(): Promise<{ leader: boolean; purged: number }> {
    return this.database.inTransaction(
      async (run) => {
        if (!(await tryTransactionLock(run, ADVISORY_LOCKS.idempotencyPurge))) return { leader: false, purged: 0 };
        return { leader: true, purged: (await run(PURGE, [])).count };
      },
      { statementTimeoutMs: PURGE_STATEMENT_TIMEOUT_MS },
    );
  }
}
