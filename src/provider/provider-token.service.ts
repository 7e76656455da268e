import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import { SecretBox } from '../common/secret-box';
import { APP_LOGGER } from '../logging/logging.module';
import { MetricsService } from '../metrics/metrics.service';
import { registerSecretValue } from '../logging/redaction';
import { ProviderAuthClient } from './clients/provider-auth.client';
import { DatabaseClock, type ClockEstimate } from './database-clock';
import { ProviderTokenRepository } from './provider-token.repository';
import { ProviderTokenUnavailableError } from './provider.errors';

export interface ProviderBearer {
  token: string;
  /** Database time of the claim that asked the provider for this token (no request of it left before). */
  obtainedAt: Date;
  expiresAt: Date;
}

/** Associated data of the sealed provider token. */
export const TOKEN_PURPOSE = 'provider-token';
/** Refresh this long before expireAt (or a tenth of the lifetime, for short-lived tokens); the repository applies the same rule in SQL. */
const REFRESH_MARGIN_MS = 5 * 60_000;
const POLL_INTERVAL_MS = 50;
/** A clock estimate less certain than this is read afresh before a 401 is judged by it. */
const MAX_CLOCK_ERROR_MS = 5;

/**
 * The provider bearer token, shared by every instance through the database:
 * - in one process, concurrent callers share one promise;
 * - across processes, one caller wins a short lease on the row and asks the provider; the others
 *   wait for the row to be filled (or for the lease to lapse, if the winner died);
 * - the token is stored encrypted;
 * - after a 401 (`renewAfterRejection`), only a token newer than the refused one and asked for
 *   since the refused request began is used: a provider-wide revocation also killed every token
 *   stored before, so the first retry of every instance goes out with a token issued after it,
 *   while the many requests refused by one revocation still share one new token.
 */
@Injectable()
export class ProviderTokenService {
  private readonly cacheKey: string;
  private readonly box: SecretBox;
  private readonly owner = randomUUID();
  private current?: ProviderBearer;
  private inFlight?: Promise<ProviderBearer>;
  private renewal?: { notBefore: Date; promise: Promise<ProviderBearer> };
  /** The database clock relative to ours, sampled at each read of the shared row. */
  private readonly databaseClock = new DatabaseClock();
  private clockReading?: Promise<ClockEstimate>;

  private readonly providerTimeoutMs: number;

  constructor(
    private readonly repository: ProviderTokenRepository,
    private readonly authClient: ProviderAuthClient,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
    private readonly metrics: MetricsService,
  ) {
    const provider = config.get('provider', { infer: true });
    this.providerTimeoutMs = provider.timeoutMs;
    this.box = new SecretBox(config.get('dataEncryptionKey', { infer: true }), config.get('dataEncryptionPreviousKeys', { infer: true }));
    // One row per provider host and API key; the key itself is not stored.
    this.cacheKey = createHash('sha256').update(`${provider.baseUrl}|${provider.apiKey}`).digest('hex').slice(0, 32);
  }

  async getBearer(): Promise<ProviderBearer> {
    if (this.current && this.isFresh(this.current)) return this.current;
    this.inFlight ??= this.loadOrRefresh().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /**
   * After a 401 on `rejected`, for a request that began at `startedAt` (this process's clock): a
   * token newer than the rejected one and asked for since that request began, from the row when
   * another caller (of any instance) already got one, else from the provider. Never an older
   * stored token, even one newer than the refused one: a provider-wide revocation killed it too.
   * The request's start is placed on the database clock by DatabaseClock's estimate.
   */
  async renewAfterRejection(rejected: ProviderBearer, startedAt: number): Promise<ProviderBearer> {
    const began = startedAt + (await this.clockEstimate()).offsetMs;
    const notBefore = new Date(Math.max(began, rejected.obtainedAt.getTime()));
    if (this.current && this.current.obtainedAt > notBefore) return this.current;
    this.current = undefined;
    const pending = this.renewal;
    // A renewal that wants a token even newer than we do serves us too.
    if (pending && pending.notBefore >= notBefore) return pending.promise;
    if (pending) {
      const bearer = await pending.promise.catch(() => undefined);
      if (bearer && bearer.obtainedAt > notBefore) return bearer;
    }
    const promise: Promise<ProviderBearer> = this.loadOrRefresh(notBefore).finally(() => {
      if (this.renewal?.promise === promise) this.renewal = undefined;
    });
    this.renewal = { notBefore, promise };
    return promise;
  }

  private isFresh(bearer: ProviderBearer): boolean {
    return bearer.expiresAt.getTime() - Date.now() > this.marginFor(bearer);
  }

  private marginFor(bearer: ProviderBearer): number {
    return Math.min(REFRESH_MARGIN_MS, (bearer.expiresAt.getTime() - bearer.obtainedAt.getTime()) / 10);
  }

  /**
   * The database clock's offset from ours: the best sample so far, or, when its error bound has
   * grown past MAX_CLOCK_ERROR_MS, one fresh reading shared by concurrent callers. A reading taken
   * in a burst may have waited in the pool's queue; DatabaseClock then keeps the older sample.
   */
  private async clockEstimate(): Promise<ClockEstimate> {
    const known = this.databaseClock.estimate();
    if (known && known.errorMs <= MAX_CLOCK_ERROR_MS) return known;
    this.clockReading ??= this.readDatabaseClock().finally(() => {
      this.clockReading = undefined;
    });
    return this.clockReading;
  }

  private async readDatabaseClock(): Promise<ClockEstimate> {
    const sentAt = Date.now();
    const databaseNow = await this.repository.databaseNow();
    this.databaseClock.note(sentAt, databaseNow.getTime(), Date.now());
    return this.databaseClock.estimate()!;
  }

  private async loadOrRefresh(notBefore?: Date): Promise<ProviderBearer> {
    const leaseMs = this.providerTimeoutMs + 5_000;
    const deadline = Date.now() + 2 * leaseMs;
    while (Date.now() < deadline) {
      const askedAt = Date.now();
      const { databaseNow, stored } = await this.repository.findFresh(this.cacheKey, notBefore);
      this.databaseClock.note(askedAt, databaseNow.getTime(), Date.now());
      if (stored) {
        const bearer = {
          token: this.box.decrypt(stored.tokenEncrypted, TOKEN_PURPOSE),
          expiresAt: stored.expiresAt,
          obtainedAt: stored.obtainedAt,
        };
        registerSecretValue(bearer.token);
        this.current = bearer;
        return bearer;
      }
      const claim = await this.repository.tryClaimRefresh(this.cacheKey, this.owner, leaseMs, notBefore);
      if (claim) return this.refresh(claim.claimedAt);
      await sleep(POLL_INTERVAL_MS + Math.random() * POLL_INTERVAL_MS);
    }
    throw new ProviderTokenUnavailableError(
      'No provider token could be obtained in time (another instance holds the refresh); nothing was sent.',
    );
  }

  private async refresh(claimedAt: Date): Promise<ProviderBearer> {
    try {
      const issued = await this.authClient.issueToken();
      registerSecretValue(issued.token);
      const obtainedAt = await this.repository.storeRefreshed(
        this.cacheKey,
        this.box.encrypt(issued.token, TOKEN_PURPOSE),
        issued.expiresAt,
        claimedAt,
      );
      this.current = { token: issued.token, expiresAt: issued.expiresAt, obtainedAt };
      this.metrics.tokenRefreshes.inc({ result: 'obtained' });
      this.logger.info({ expiresAt: issued.expiresAt.toISOString() }, 'provider token refreshed');
      return this.current;
    } catch (error) {
      this.metrics.tokenRefreshes.inc({ result: 'failed' });
      // The provider's words (already scrubbed at the boundary) are for the operators, never for a client.
      const { code, providerStatus, providerMessage } = error as { code?: string; providerStatus?: number; providerMessage?: string };
      this.logger.error(
        { code, providerStatus, providerMessage },
        'provider token request failed: check PROVIDER_API_KEY and PROVIDER_SECRET_KEY',
      );
      await this.repository.releaseLease(this.cacheKey, this.owner);
      throw error;
    }
  }
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
