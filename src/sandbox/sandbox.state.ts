import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Card, CardUser } from './sandbox.cards.types';
import { assertValidFault, pathMatches, type ActiveFault, type SandboxFault } from './sandbox.faults';
import type { FiatDistribution, LinkInit, WalletLink } from './sandbox.link.types';
import type { CallbackDelivery, PayIn } from './sandbox.payin.types';

/** One request as the sandbox received it, recorded before any validation. */
export interface RecordedRequest {
  id: number;
  /** ISO-8601 time of arrival. */
  at: string;
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, unknown>;
  /** Header names lowercased, values as received (secrets included: this is a test double). */
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body; the raw text when it was not JSON; null when there was none. */
  body: unknown;
  ip: string;
}

export interface SandboxCounters {
  /** Requests recorded (control routes under /__sandbox excluded). */
  requests: number;
  /** Requests to POST /api/action/auth, accepted or not. */
  authRequests: number;
  tokensIssued: number;
  payInsAccepted: number;
  rateLimited: number;
  faultsApplied: number;
  callbackAttempts: number;
}

export interface ResetOptions {
  /** Also clear every business object, token, fault, rate-limit window and counter. */
  all?: boolean;
}

function emptyCounters(): SandboxCounters {
  return {
    requests: 0,
    authRequests: 0,
    tokensIssued: 0,
    payInsAccepted: 0,
    rateLimited: 0,
    faultsApplied: 0,
    callbackAttempts: 0,
  };
}

/**
 * All in-memory state of one sandbox instance, plus the record of what it received and sent.
 * Emits `request` (RecordedRequest) and `callback` (CallbackDelivery).
 */
export class SandboxState extends EventEmitter {
  readonly requests: RecordedRequest[] = [];
  readonly callbackDeliveries: CallbackDelivery[] = [];
  counters: SandboxCounters = emptyCounters();

  /** token → expiry (epoch ms). */
  readonly tokens = new Map<string, number>();
  /** By provider reference (the path parameter of GET card/user/{reference}). */
  readonly cardUsers = new Map<string, CardUser>();
  readonly cards = new Map<string, Card>();
  /** By lowercased email. */
  readonly walletLinks = new Map<string, WalletLink>();
  /** By payment_id. */
  readonly linkInits = new Map<string, LinkInit>();
  readonly fiatDistributions: FiatDistribution[] = [];
  /** By order_id. */
  readonly payIns = new Map<string, PayIn>();

  private faults: ActiveFault[] = [];
  private agentHits = new Map<string, number[]>();
  private nextRequestId = 1;
  private nextFaultId = 1;
  private nextDeliveryId = 1;

  private timers = new Set<NodeJS.Timeout>();
  private aborters = new Set<AbortController>();
  private hangReleases = new Set<() => void>();
  private closedFlag = false;

  // ---------------------------------------------------------------- recorded requests

  record(entry: Omit<RecordedRequest, 'id' | 'at'>): RecordedRequest {
    const recorded: RecordedRequest = { id: this.nextRequestId++, at: new Date().toISOString(), ...entry };
    this.requests.push(recorded);
    this.counters.requests++;
    this.emit('request', recorded);
    return recorded;
  }

  /** Recorded requests whose path matches `pattern` (exact or prefix with `*`), optionally by method. */
  requestsTo(pattern: string, method?: string): RecordedRequest[] {
    return this.requests.filter((r) => pathMatches(pattern, r.path) && (!method || r.method.toUpperCase() === method.toUpperCase()));
  }

  // ---------------------------------------------------------------- tokens

  issueToken(ttlMs: number): { token: string; expiresAt: number } {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = Date.now() + ttlMs;
    this.tokens.set(token, expiresAt);
    this.counters.tokensIssued++;
    return { token, expiresAt };
  }

  isTokenValid(token: string): boolean {
    const expiresAt = this.tokens.get(token);
    if (expiresAt === undefined) return false;
    if (Date.now() >= expiresAt) {
      this.tokens.delete(token);
      return false;
    }
    return true;
  }

  /** Invalidates every issued token: the next call with any of them answers 401. */
  revokeTokens(): void {
    this.tokens.clear();
  }

  // ---------------------------------------------------------------- faults

  injectFault(fault: SandboxFault): number {
    assertValidFault(fault);
    const times = fault.times ?? 1;
    const id = this.nextFaultId++;
    this.faults.push({ id, path: fault.path, times, fault: { ...fault } });
    return id;
  }

  clearFaults(): void {
    this.faults = [];
  }

  get pendingFaults(): readonly ActiveFault[] {
    return this.faults;
  }

  /** Consumes one use of the first fault matching this request, if any. */
  takeFault(method: string, path: string): SandboxFault | undefined {
    const index = this.faults.findIndex(
      (f) => pathMatches(f.path, path) && (!f.fault.method || f.fault.method.toUpperCase() === method.toUpperCase()),
    );
    if (index < 0) return undefined;
    const active = this.faults[index];
    active.times--;
    if (active.times <= 0) this.faults.splice(index, 1);
    this.counters.faultsApplied++;
    return active.fault;
  }

  // ---------------------------------------------------------------- agent rate limit

  /**
   * Counts one /api/agent request of `ip` in a rolling hour. Refused requests are not counted, so
   * that at most `limit` requests are admitted in any window of one hour.
   */
  admitAgentRequest(ip: string, limit: number, now = Date.now()): { allowed: boolean; retryAfterSeconds: number } {
    const windowStart = now - 3_600_000;
    const hits = (this.agentHits.get(ip) ?? []).filter((t) => t > windowStart);
    if (hits.length >= limit) {
      this.agentHits.set(ip, hits);
      this.counters.rateLimited++;
      const retryAfterMs = hits[hits.length - limit] - windowStart;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) };
    }
    hits.push(now);
    this.agentHits.set(ip, hits);
    return { allowed: true, retryAfterSeconds: 0 };
  }

  // ---------------------------------------------------------------- callbacks

  recordDelivery(entry: Omit<CallbackDelivery, 'id' | 'at'>): CallbackDelivery {
    const delivery: CallbackDelivery = { id: this.nextDeliveryId++, at: new Date().toISOString(), ...entry };
    this.callbackDeliveries.push(delivery);
    this.counters.callbackAttempts++;
    this.emit('callback', delivery);
    return delivery;
  }

  /**
   * Resolves with the first delivery attempt (already made or future) satisfying `predicate`;
   * rejects after `timeoutMs`.
   */
  waitForCallback(predicate: (d: CallbackDelivery) => boolean, timeoutMs = 5000): Promise<CallbackDelivery> {
    return this.waitFor('callback', this.callbackDeliveries, predicate, timeoutMs);
  }

  /** Same for recorded requests. */
  waitForRequest(predicate: (r: RecordedRequest) => boolean, timeoutMs = 5000): Promise<RecordedRequest> {
    return this.waitFor('request', this.requests, predicate, timeoutMs);
  }

  private waitFor<T>(event: string, existing: T[], predicate: (item: T) => boolean, timeoutMs: number): Promise<T> {
    const found = existing.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise<T>((resolve, reject) => {
      const listener = (item: T) => {
        if (!predicate(item)) return;
        clearTimeout(timer);
        this.off(event, listener);
        resolve(item);
      };
      const timer = setTimeout(() => {
        this.off(event, listener);
        reject(new Error(`sandbox: no matching ${event} within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.on(event, listener);
    });
  }

  // ---------------------------------------------------------------- timers and lifecycle

  get closed(): boolean {
    return this.closedFlag;
  }

  /** setTimeout that is unref'd, forgotten once fired, and cancelled by `shutdown()` / `reset({all})`. */
  schedule(fn: () => void, ms: number): void {
    if (this.closedFlag) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        fn();
      },
      Math.max(0, ms),
    );
    timer.unref();
    this.timers.add(timer);
  }

  /** Promise that resolves after `ms`, or at once (with false) when the sandbox shuts down. */
  sleep(ms: number): Promise<boolean> {
    if (this.closedFlag) return Promise.resolve(false);
    return new Promise((resolve) => {
      const release = () => {
        clearTimeout(timer);
        this.hangReleases.delete(release);
        resolve(false);
      };
      const timer = setTimeout(
        () => {
          this.hangReleases.delete(release);
          resolve(true);
        },
        Math.max(0, ms),
      );
      timer.unref();
      this.hangReleases.add(release);
    });
  }

  /** Registers a function that releases a held request; called by `shutdown()`. Returns an unregister. */
  onShutdown(release: () => void): () => void {
    this.hangReleases.add(release);
    return () => this.hangReleases.delete(release);
  }

  newAbortController(): { controller: AbortController; done: () => void } {
    const controller = new AbortController();
    this.aborters.add(controller);
    return { controller, done: () => this.aborters.delete(controller) };
  }

  private cancelAsyncWork(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const controller of this.aborters) controller.abort();
    this.aborters.clear();
    for (const release of [...this.hangReleases]) release();
    this.hangReleases.clear();
  }

  /** Stops every pending timer, callback delivery and held request. Called by `RunningSandbox.close()`. */
  shutdown(): void {
    this.closedFlag = true;
    this.cancelAsyncWork();
  }

  /**
   * Clears the recorded requests and callback deliveries. With `{all: true}` also every business
   * object, token, fault, rate-limit window, counter and scheduled callback.
   */
  reset(options: ResetOptions = {}): void {
    this.requests.length = 0;
    this.callbackDeliveries.length = 0;
    if (!options.all) return;
    const closed = this.closedFlag;
    this.cancelAsyncWork();
    this.closedFlag = closed;
    this.counters = emptyCounters();
    this.tokens.clear();
    this.cardUsers.clear();
    this.cards.clear();
    this.walletLinks.clear();
    this.linkInits.clear();
    this.fiatDistributions.length = 0;
    this.payIns.clear();
    this.faults = [];
    this.agentHits.clear();
  }
}
