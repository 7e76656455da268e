import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { ValidationFailedError } from '../common/domain-error';
import { IDEMPOTENCY_KEY_HEADER, IdempotencyInProgressError, IdempotencyKeyRequiredError, IdempotencyKeyReusedError } from './idempotency.errors';
import { IdempotencyRepository, type IdempotencyRecord } from './idempotency.repository';

export const IDEMPOTENCY_OPTIONS = Symbol('IDEMPOTENCY_OPTIONS');

export interface IdempotencyOptions {
  /** How long a retry waits for the first request's answer before answering 409 idempotency_in_progress. */
  waitMs?: number;
  /** How often a waiting retry looks at the record. */
  pollMs?: number;
  /** How long a key is kept after its first use. */
  ttlSeconds?: number;
}

const DEFAULTS: Required<IdempotencyOptions> = { waitMs: 5_000, pollMs: 75, ttlSeconds: 24 * 60 * 60 };

export type BeginResult = { kind: 'new'; record: IdempotencyRecord } | { kind: 'replay'; status: number; body: unknown };

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The key of an Idempotency-Key header, or the 400 that its absence or shape deserves. */
export function parseIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined) throw new IdempotencyKeyRequiredError();
  if (Array.isArray(header)) {
    throw new ValidationFailedError([{ field: IDEMPOTENCY_KEY_HEADER, message: `send a single ${IDEMPOTENCY_KEY_HEADER} header` }]);
  }
  if (!KEY_PATTERN.test(header)) {
    throw new ValidationFailedError([{ field: IDEMPOTENCY_KEY_HEADER, message: `${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 printable ASCII characters` }]);
  }
  return header;
}

/**
 * JSON with object keys sorted at every depth, so that two bodies a client would call "the same"
 * (same members, any order) serialise identically. Array order stays: it is meaningful.
 */
export function canonicalJson(value: unknown): string {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return canonicalJson((value as { toJSON(): unknown }).toJSON());
  }
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .filter((name) => (value as Record<string, unknown>)[name] !== undefined)
      .map((name) => `${JSON.stringify(name)}:${canonicalJson((value as Record<string, unknown>)[name])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The scope is hashed in too, so a record can never match a request of another route. */
export function requestHash(scope: string, body: unknown): string {
  return createHash('sha256').update(scope).update('\n').update(canonicalJson(body)).digest('hex');
}

/**
 * First request wins: the first request with a (user, scope, key) executes, the later ones get
 * its stored answer, wait for it while it runs, or are refused when their body differs.
 */
@Injectable()
export class IdempotencyService {
  private readonly options: Required<IdempotencyOptions>;

  constructor(
    private readonly repository: IdempotencyRepository,
    @Optional() @Inject(IDEMPOTENCY_OPTIONS) options?: IdempotencyOptions,
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  async begin(userId: string, scope: string, key: string, requestBody: unknown, options: { waitMs?: number } = {}): Promise<BeginResult> {
    const hash = requestHash(scope, requestBody);
    const deadline = Date.now() + (options.waitMs ?? this.options.waitMs);
    for (;;) {
      const claim = await this.repository.insertOrGet({ userId, scope, key, requestHash: hash, ttlSeconds: this.options.ttlSeconds });
      if (claim.created) return { kind: 'new', record: claim.record };
      let record = claim.record;
      // Wait on the holder; when it vanishes (released after a validation failure, or expired), claim again.
      while (record) {
        if (record.requestHash !== hash) throw new IdempotencyKeyReusedError();
        if (record.state === 'completed') return { kind: 'replay', status: record.responseStatus ?? 200, body: record.responseBody };
        if (Date.now() >= deadline) throw new IdempotencyInProgressError();
        await sleep(Math.min(this.options.pollMs, Math.max(1, deadline - Date.now())));
        record = await this.repository.find(userId, scope, key);
      }
    }
  }

  async complete(record: IdempotencyRecord, status: number, body: unknown): Promise<boolean> {
    return this.repository.complete(record, status, body);
  }

  /** For a request that did not start executing: its key becomes free again. */
  async abandon(record: IdempotencyRecord): Promise<void> {
    await this.repository.release(record);
  }
}
