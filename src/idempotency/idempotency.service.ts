import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ScopedValue } from '../common/async-scope';
import type { AuthUser } from '../auth/auth.types';
import type { AppConfig } from '../config/app-config';
import { IdempotencyInProgressError, IdempotencyKeyReusedError } from './idempotency.errors';
import { IdempotencyRepository, type IdempotencyClaim, type IdempotencyRecord, type IdempotentResource } from './idempotency.repository';
import { fingerprintKey, fingerprintMatches, requestFingerprint, type RequestFingerprint } from './request-fingerprint';

export const IDEMPOTENCY_OPTIONS = Symbol('IDEMPOTENCY_OPTIONS');

export interface IdempotencyOptions {
  /** How long a retry waits for the first request's answer before answering 409 idempotency_in_progress. */
  waitMs?: number;
  /** How often a waiting retry looks at the record. */
  pollMs?: number;
  /** How long a key is kept after its first use. */
  ttlSeconds?: number;
  /**
   * How long a request holds its key without renewing it; renewed every third of it while the
   * request runs. Past it, the request is presumed dead (crash, kill, lost database) and a retry
   * recovers. Default: the provider timeout (which bounds one provider call) plus 5 s.
   */
  leaseMs?: number;
}

const DEFAULTS = { waitMs: 5_000, pollMs: 75, ttlSeconds: 24 * 60 * 60 };
const LEASE_MARGIN_MS = 5_000;
const DEFAULT_PROVIDER_TIMEOUT_MS = 15_000;

/** The current answer for a resource a dead request created, or `undefined` when it no longer exists. */
export type ResourceAnswer = (resourceId: string, user: AuthUser) => Promise<unknown>;

export type BeginResult =
  | { kind: 'new'; record: IdempotencyRecord }
  | { kind: 'replay'; status: number; body: unknown }
  /** The request holding the key died after creating `resource`: the retry answers that resource as it is now. */
  | { kind: 'recover'; record: IdempotencyRecord; resource: IdempotentResource };

/** The request running under `@Idempotent`, as its handler and repositories see it. */
export interface InFlightRequest {
  /** Its claim of the key: already written, or to be written by the statement creating its resource. */
  readonly claim: IdempotencyClaim;
  /** The status of the route's answer. */
  readonly status: number;
  /** Whether the handler may store the answer itself, with its last write (a route without `storeBody`). */
  readonly answerInline: boolean;
  /** Set once the handler stored the answer: the interceptor then stores nothing. */
  answerStored: boolean;
}

/**
 * First request wins: the first request with a (user, scope, key) executes, the later ones get
 * its stored answer, wait for it while it runs, or are refused when their request differs. A
 * request that died while holding its key (its lease lapsed) never strands it: a retry answers
 * the resource that request created, or runs anew when it created nothing.
 */
@Injectable()
export class IdempotencyService {
  private readonly options: Required<IdempotencyOptions>;
  private readonly inFlight = new ScopedValue<InFlightRequest>('idempotentRequest');
  private readonly recoveries = new Map<string, ResourceAnswer>();
  /** Scopes whose handlers link what they create before anything irreversible: for them, "nothing linked" means "nothing done". */
  private readonly recoverableScopes = new Set<string>();
  private readonly fingerprintKey: Buffer;
  /** fingerprintKey, then those of the previous encryption keys: what a stored fingerprint may be keyed with. */
  private readonly acceptedFingerprintKeys: Buffer[];

  constructor(
    private readonly repository: IdempotencyRepository,
    @Optional() @Inject(IDEMPOTENCY_OPTIONS) options?: IdempotencyOptions,
    @Optional() config?: ConfigService<AppConfig, true>,
  ) {
    const provider = config?.get('provider', { infer: true });
    const dataEncryptionKey = config?.get('dataEncryptionKey', { infer: true });
    const leaseMs = (provider?.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS) + LEASE_MARGIN_MS;
    this.options = { ...DEFAULTS, leaseMs, ...options };
    // Without the configuration (a unit test building the service alone) a random key still keys
    // every fingerprint; the application always has DATA_ENCRYPTION_KEY, shared by all instances.
    this.fingerprintKey = dataEncryptionKey?.length ? fingerprintKey(dataEncryptionKey) : randomBytes(32);
    const previousKeys = config?.get('dataEncryptionPreviousKeys', { infer: true }) ?? [];
    this.acceptedFingerprintKeys = [this.fingerprintKey, ...previousKeys.map((key) => fingerprintKey(key))];
  }

  /** How long a request holds its key between two renewals. */
  get leaseMs(): number {
    return this.options.leaseMs;
  }

  async begin(userId: string, request: RequestFingerprint, key: string, options: { waitMs?: number } = {}): Promise<BeginResult> {
    const { scope } = request;
    const fingerprint = requestFingerprint(this.fingerprintKey, request);
    const deadline = Date.now() + (options.waitMs ?? this.options.waitMs);
    for (;;) {
      const claim = await this.repository.insertOrGet({
        userId,
        scope,
        key,
        requestHash: fingerprint,
        ttlSeconds: this.options.ttlSeconds,
        leaseMs: this.options.leaseMs,
      });
      if (claim.created) return { kind: 'new', record: claim.record };
      let record = claim.record;
      // Wait on the holder; when it vanishes (released after a validation failure, or expired), claim again.
      while (record) {
        if (record.requestHash !== fingerprint && !fingerprintMatches(record.requestHash, this.acceptedFingerprintKeys, request)) {
          throw new IdempotencyKeyReusedError();
        }
        if (record.state === 'completed') return { kind: 'replay', status: record.responseStatus ?? 200, body: record.responseBody };
        if (record.leaseLapsed) {
          if (record.resourceType && record.resourceId)
            return { kind: 'recover', record, resource: { type: record.resourceType, id: record.resourceId } };
          if (this.recoverableScopes.has(scope)) {
            const claimed = await this.repository.claimLapsed(record, this.options.leaseMs);
            if (claimed) return { kind: 'new', record: claimed };
            record = await this.repository.find(userId, scope, key);
            continue;
          }
        }
        if (Date.now() >= deadline) throw new IdempotencyInProgressError();
        await sleep(Math.min(this.options.pollMs, Math.max(1, deadline - Date.now())));
        record = await this.repository.find(userId, scope, key);
      }
    }
  }

  /**
   * For a recovery whose linked resource no longer exists (removed because it provably never
   * reached the provider): nothing was created, so the retry runs anew, if it wins the record.
   */
  async claimAfterVanishedResource(record: IdempotencyRecord): Promise<IdempotencyRecord | undefined> {
    return this.repository.claimLapsed(record, this.options.leaseMs);
  }

  /** The claim a request makes of its key in the statement that creates its resource (`claimInResourceStatement`). */
  newClaim(userId: string, request: RequestFingerprint, key: string): IdempotencyClaim {
    const { ttlSeconds, leaseMs } = this.options;
    return {
      id: randomUUID(),
      userId,
      scope: request.scope,
      key,
      requestHash: requestFingerprint(this.fingerprintKey, request),
      ttlSeconds,
      leaseMs,
    };
  }

  /** The claim of a record a request holds already. */
  claimOf(record: IdempotencyRecord): IdempotencyClaim {
    const { ttlSeconds, leaseMs } = this.options;
    return {
      id: record.id,
      userId: record.userId,
      scope: record.scope,
      key: record.key,
      requestHash: record.requestHash,
      ttlSeconds,
      leaseMs,
    };
  }

  /** Runs `work` as `request`: what it creates is linked to its record (see pendingClaim), and it may store its answer itself. */
  runHolding<T>(request: InFlightRequest, work: () => Promise<T>): Promise<T> {
    return this.inFlight.run(request, work);
  }

  /**
   * The id of the idempotency record held by the request in progress, if it runs under
   * `@Idempotent`: repositories link the resource they create to it, in the creating transaction.
   */
  recoveryPoint(): string | undefined {
    return this.inFlight.get()?.claim.id;
  }

  /** The claim of the request in progress, for idempotencyLinkCte / linkIdempotentResource; undefined outside `@Idempotent`. */
  pendingClaim(): IdempotencyClaim | undefined {
    return this.inFlight.get()?.claim;
  }

  /**
   * For a handler that stores its answer with its last write (one round trip fewer): the record and
   * the status to store, when the route allows it. It then calls answerStoredInline once stored.
   */
  inlineAnswer(): { recordId: string; status: number } | undefined {
    const request = this.inFlight.get();
    return request?.answerInline ? { recordId: request.claim.id, status: request.status } : undefined;
  }

  answerStoredInline(): void {
    const request = this.inFlight.get();
    if (request) request.answerStored = true;
  }

  /**
   * Declares that the handlers of `scopes` link the resource they create (see recoveryPoint) in the
   * transaction that stores it, before anything irreversible (a provider call); and how a retry
   * answers a resource of `type` created by a request that died: the resource as it is now, in the
   * shape of the route's normal answer, or `undefined` when it no longer exists. A lapsed record of
   * such a scope with no resource runs anew; one of another scope (nothing declared) stays in
   * progress until it expires, since what it did cannot be known.
   */
  registerRecovery(recovery: { type: string; scopes: readonly string[]; answer: ResourceAnswer }): void {
    this.recoveries.set(recovery.type, recovery.answer);
    for (const scope of recovery.scopes) this.recoverableScopes.add(scope);
  }

  /** The answer to a retry of a request that died after creating `resource`. */
  async recover(resource: IdempotentResource, user: AuthUser): Promise<unknown> {
    const answer = this.recoveries.get(resource.type);
    if (!answer) throw new Error(`no recovery is registered for idempotent resources of type ${resource.type}`);
    return answer(resource.id, user);
  }

  /** Extends the lease of a running request; false when the record is no longer its own. */
  async renewLease(record: Pick<IdempotencyRecord, 'id'>): Promise<boolean> {
    return this.repository.renewLease(record, this.options.leaseMs);
  }

  async complete(record: Pick<IdempotencyRecord, 'id'>, status: number, body: unknown): Promise<boolean> {
    return this.repository.complete(record, status, body);
  }

  /** For a request that did not start executing: its key becomes free again. */
  async abandon(record: Pick<IdempotencyRecord, 'id'>): Promise<void> {
    await this.repository.release(record);
  }
}
