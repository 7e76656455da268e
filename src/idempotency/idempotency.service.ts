import { createHash, createHmac, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ValidationFailedError } from '../common/domain-error';
import { ScopedValue } from '../common/async-scope';
import type { AuthUser } from '../auth/auth.types';
import type { AppConfig } from '../config/app-config';
import {
  IDEMPOTENCY_KEY_HEADER,
  IdempotencyInProgressError,
  IdempotencyKeyRequiredError,
  IdempotencyKeyReusedError,
} from './idempotency.errors';
import { IdempotencyRepository, type IdempotencyClaim, type IdempotencyRecord, type IdempotentResource } from './idempotency.repository';

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

/** What makes two requests "the same request" for a key: the whole request, not only its body. */
export interface RequestFingerprint {
  /** The operation (the route's `@Idempotent` scope). */
  scope: string;
  method: string;
  /** The route pattern, e.g. `/v1/cards/:id/topup`. */
  route: string;
  /** The path parameters: the same body on another card is another request. */
  params: unknown;
  body: unknown;
}

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The key of an Idempotency-Key header, or the 400 that its absence or shape deserves. */
export function parseIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined) throw new IdempotencyKeyRequiredError();
  if (Array.isArray(header)) {
    throw new ValidationFailedError([{ field: IDEMPOTENCY_KEY_HEADER, message: `send a single ${IDEMPOTENCY_KEY_HEADER} header` }]);
  }
  if (!KEY_PATTERN.test(header)) {
    throw new ValidationFailedError([
      { field: IDEMPOTENCY_KEY_HEADER, message: `${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 printable ASCII characters` },
    ]);
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

/**
 * The request part of a stored fingerprint: scope, method, route, path parameters and body. A key
 * reused on another resource (another card, another card user) or another route fingerprints
 * differently, so it is refused as reused instead of replaying the first request's answer.
 */
function canonicalRequest(request: RequestFingerprint): string {
  return canonicalJson([request.scope, request.method.toUpperCase(), request.route, request.params ?? {}, request.body ?? null]);
}

/** Marks a stored fingerprint as keyed; a stored value without it is a legacy unkeyed hash. */
export const KEYED_FINGERPRINT_PREFIX = 'hmac1:';
/** HKDF `info` of the fingerprint key: the encryption key itself never signs anything. */
const FINGERPRINT_KEY_PURPOSE = 'payments-bff idempotency request fingerprint v1';

/**
 * The key of request fingerprints, derived from DATA_ENCRYPTION_KEY (shared by every instance,
 * already a secret operators manage) with HKDF under its own label, so a fingerprint says nothing
 * about the encryption key and no new setting is needed.
 */
export function fingerprintKey(dataEncryptionKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', dataEncryptionKey, Buffer.alloc(0), FINGERPRINT_KEY_PURPOSE, 32));
}

/**
 * What is stored of a request: an HMAC-SHA256 under the server's fingerprint key. A plain hash
 * sat beside the answer and gave low-entropy fields of the body (an identity document number, an
 * OTP) back to anyone who could read the table and try every value; without the key, nobody can.
 */
export function requestFingerprint(key: Buffer, request: RequestFingerprint): string {
  return KEYED_FINGERPRINT_PREFIX + createHmac('sha256', key).update(canonicalRequest(request)).digest('hex');
}

/**
 * The unkeyed SHA-256 that records stored before fingerprints were keyed hold. Compared with only
 * so that a retry of such a request still replays (never runs twice, never a 422) until the
 * record expires; none is written any more. Removable once no record from before the upgrade is
 * left (their TTL is 24 h).
 */
export function legacyRequestHash(request: RequestFingerprint): string {
  return createHash('sha256').update(canonicalRequest(request)).digest('hex');
}

const LEGACY_HASH = /^[0-9a-f]{64}$/;

/**
 * Whether a stored fingerprint (keyed, or a legacy plain hash) is that of `request`. `keys` are the
 * fingerprint keys of DATA_ENCRYPTION_KEY and of each of DATA_ENCRYPTION_PREVIOUS_KEYS: a retry of a
 * request fingerprinted before a rotation still replays rather than answering 422.
 */
export function fingerprintMatches(stored: string, keys: Buffer | readonly Buffer[], request: RequestFingerprint): boolean {
  if (stored.startsWith(KEYED_FINGERPRINT_PREFIX))
    return (Buffer.isBuffer(keys) ? [keys] : keys).some((key) => stored === requestFingerprint(key, request));
  return LEGACY_HASH.test(stored) && stored === legacyRequestHash(request);
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

/**
 * An answer's JSON text around the value of `field`, its last member, a string only the storing
 * statement knows (a time it writes): `before + JSON-escaped value + after` is JSON.stringify of the
 * answer with that value, byte for byte (see idempotencyAnswerCte).
 */
export function jsonTextAround(answer: object, field: string): { before: string; after: string } {
  const names = Object.keys(answer);
  if (names[names.length - 1] !== field) throw new Error(`${field} must be the last member of the answer`);
  const rest: Record<string, unknown> = { ...answer };
  delete rest[field];
  const head = JSON.stringify(rest).slice(0, -1);
  return { before: `${head}${names.length > 1 ? ',' : ''}${JSON.stringify(field)}:"`, after: '"}' };
}
