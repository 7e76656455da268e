import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../database/prisma.service';
import { ADVISORY_LOCKS } from '../database/advisory-locks';


// The purge is a background chore: give up rather than queue behind a busy database for long.
const PURGE_TRANSACTION_LIMITS = { maxWait: 10_000, timeout: 60_000 };

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
}

export type InsertOutcome =
  | { created: true; record: IdempotencyRecord }
  /** `record` is undefined when the holder vanished between the insert and the read (released or expired). */
  | { created: false; record: IdempotencyRecord | undefined };

export interface NewIdempotencyRecord {
  userId: string;
  scope: string;
  key: string;
  requestHash: string;
  ttlSeconds: number;
}

const COLUMNS = Prisma.raw(`id::text AS id, user_id AS "userId", scope, key, request_hash AS "requestHash", state,
  response_status AS "responseStatus", response_body AS "responseBody", expires_at AS "expiresAt"`);

/**
 * The answer is kept as its JSON text, in a jsonb string: a jsonb object would reorder its
 * members, and a replay must be the very bytes of the first answer.
 */
function fromRow(row: IdempotencyRecord): IdempotencyRecord {
  const stored = row.responseBody;
  return { ...row, responseBody: typeof stored === 'string' ? JSON.parse(stored) : stored };
}

/**
 * The idempotency records. Every time comparison uses the database clock, shared by all
 * instances; the unique (user_id, scope, key) constraint is what makes "first request wins" hold
 * across instances.
 */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Claims (userId, scope, key) for a new request, or returns the live record holding it. An
   * expired record that the purge has not removed yet is taken over in the same statement, so an
   * expired key is reusable whether or not the purge already ran.
   */
  async insertOrGet(input: NewIdempotencyRecord): Promise<InsertOutcome> {
    const inserted = await this.prisma.$queryRaw<IdempotencyRecord[]>`
      INSERT INTO idempotency_records (id, user_id, scope, key, request_hash, state, created_at, expires_at)
      VALUES (${randomUUID()}::uuid, ${input.userId}, ${input.scope}, ${input.key}, ${input.requestHash}, 'in_progress',
              now(), now() + make_interval(secs => ${input.ttlSeconds}))
      ON CONFLICT (user_id, scope, key) DO UPDATE
        SET id = EXCLUDED.id, request_hash = EXCLUDED.request_hash, state = EXCLUDED.state, response_status = NULL,
            response_body = NULL, created_at = EXCLUDED.created_at, completed_at = NULL, expires_at = EXCLUDED.expires_at
        WHERE idempotency_records.expires_at <= now()
      RETURNING ${COLUMNS}`;
    if (inserted[0]) return { created: true, record: fromRow(inserted[0]) };
    return { created: false, record: await this.find(input.userId, input.scope, input.key) };
  }

  /** The live (not expired) record of a key, if any. */
  async find(userId: string, scope: string, key: string): Promise<IdempotencyRecord | undefined> {
    const rows = await this.prisma.$queryRaw<IdempotencyRecord[]>`
      SELECT ${COLUMNS} FROM idempotency_records
      WHERE user_id = ${userId} AND scope = ${scope} AND key = ${key} AND expires_at > now()`;
    return rows[0] && fromRow(rows[0]);
  }

  /**
   * Stores the answer of the request that holds the record. False when the record is no longer
   * this request's (it expired and was taken over or purged meanwhile): the answer is then not kept.
   */
  async complete(record: Pick<IdempotencyRecord, 'id'>, status: number, body: unknown): Promise<boolean> {
    const updated = await this.prisma.$executeRaw`
      UPDATE idempotency_records
      SET state = 'completed', response_status = ${status}, response_body = to_jsonb(${JSON.stringify(body ?? null)}::text), completed_at = now()
      WHERE id = ${record.id}::uuid AND state = 'in_progress'`;
    return updated === 1;
  }

  /** Frees the key of a request that never started executing, so that a corrected retry can run. */
  async release(record: Pick<IdempotencyRecord, 'id'>): Promise<void> {
    await this.prisma.$executeRaw`DELETE FROM idempotency_records WHERE id = ${record.id}::uuid AND state = 'in_progress'`;
  }

  /** Deletes the records expired at `now` (by default the database's now). */
  async purgeExpired(now?: Date): Promise<number> {
    if (now) return this.prisma.$executeRaw`DELETE FROM idempotency_records WHERE expires_at < ${now}`;
    return this.prisma.$executeRaw`DELETE FROM idempotency_records WHERE expires_at < now()`;
  }

  /**
   * Purges expired records unless another instance is purging right now: the transaction-scoped
   * advisory lock is taken without waiting, so instances never queue behind each other for a chore
   * that one of them is already doing.
   */
  async tryPurgeAsLeader(): Promise<{ leader: boolean; purged: number }> {
    return this.prisma.$transaction(async (tx) => {
      // Read as text: never depends on how the driver adapter maps booleans.
      const [lock] = await tx.$queryRaw<{ locked: string }[]>`SELECT pg_try_advisory_xact_lock(${ADVISORY_LOCKS.idempotencyPurge}::bigint)::text AS locked`;
      if (lock?.locked !== 'true') return { leader: false, purged: 0 };
      const purged = await tx.$executeRaw`DELETE FROM idempotency_records WHERE expires_at < now()`;
      return { leader: true, purged };
    }, PURGE_TRANSACTION_LIMITS);
  }
}
