import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { SecretBox } from '../common/secret-box';
import { APP_LOGGER } from '../logging/logging.module';
import { MetricsService } from '../metrics/metrics.service';
import { registerSecretValue } from '../logging/redaction';
import { ProviderAuthClient } from './clients/provider-auth.client';
import { ProviderTokenRepository } from './provider-token.repository';
import { ProviderTokenUnavailableError } from './provider.errors';

export interface ProviderBearer {
  token: string;
  /** Identifies this token's version in the shared row, to invalidate exactly it after a 401. */
  obtainedAt: Date;
  expiresAt: Date;
}

const TOKEN_PURPOSE = 'provider-token';
/** Refresh this long before expireAt (or a tenth of the lifetime, for short-lived tokens); the repository applies the same rule in SQL. */
const REFRESH_MARGIN_MS = 5 * 60_000;
const POLL_INTERVAL_MS = 50;

/**
 * The provider bearer token, shared by every instance through the database:
 * - in one process, concurrent callers share one promise;
 * - across processes, one caller wins a short lease on the row and asks the provider; the others
 *   wait for the row to be filled (or for the lease to lapse, if the winner died);
 * - the token is stored encrypted.
 */
@Injectable()
export class ProviderTokenService {
  private readonly cacheKey: string;
  private readonly box: SecretBox;
  private readonly owner = randomUUID();
  private current?: ProviderBearer;
  private inFlight?: Promise<ProviderBearer>;

  constructor(
    private readonly repository: ProviderTokenRepository,
    private readonly authClient: ProviderAuthClient,
    @InjectConfig() private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
    private readonly metrics: MetricsService,
  ) {
    this.box = new SecretBox(config.dataEncryptionKey);
    // One row per provider host and API key; the key itself is not stored.
    this.cacheKey = createHash('sha256').update(`${config.provider.baseUrl}|${config.provider.apiKey}`).digest('hex').slice(0, 32);
  }

  async getBearer(): Promise<ProviderBearer> {
    if (this.current && this.isFresh(this.current)) return this.current;
    this.inFlight ??= this.loadOrRefresh().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** After a 401: forgets this token everywhere, unless another caller already replaced it. */
  async invalidate(bearer: ProviderBearer): Promise<void> {
    if (this.current?.obtainedAt.getTime() === bearer.obtainedAt.getTime()) this.current = undefined;
    await this.repository.expireIfCurrent(this.cacheKey, bearer.obtainedAt);
  }

  private isFresh(bearer: ProviderBearer): boolean {
    return bearer.expiresAt.getTime() - Date.now() > this.marginFor(bearer);
  }

  private marginFor(bearer: ProviderBearer): number {
    return Math.min(REFRESH_MARGIN_MS, (bearer.expiresAt.getTime() - bearer.obtainedAt.getTime()) / 10);
  }

  private async loadOrRefresh(): Promise<ProviderBearer> {
    const leaseMs = this.config.provider.timeoutMs + 5_000;
    const deadline = Date.now() + 2 * leaseMs;
    while (Date.now() < deadline) {
      const stored = await this.repository.findFresh(this.cacheKey);
      if (stored) {
        const bearer = { token: this.box.decrypt(stored.tokenEncrypted, TOKEN_PURPOSE), expiresAt: stored.expiresAt, obtainedAt: stored.obtainedAt };
        registerSecretValue(bearer.token);
        this.current = bearer;
        return bearer;
      }
      if (await this.repository.tryClaimRefresh(this.cacheKey, this.owner, leaseMs)) return this.refresh();
      await sleep(POLL_INTERVAL_MS + Math.random() * POLL_INTERVAL_MS);
    }
    throw new ProviderTokenUnavailableError('No provider token could be obtained in time (another instance holds the refresh); nothing was sent.');
  }

  private async refresh(): Promise<ProviderBearer> {
    try {
      const issued = await this.authClient.issueToken();
      registerSecretValue(issued.token);
      const obtainedAt = await this.repository.storeRefreshed(this.cacheKey, this.box.encrypt(issued.token, TOKEN_PURPOSE), issued.expiresAt);
      this.current = { token: issued.token, expiresAt: issued.expiresAt, obtainedAt };
      this.metrics.tokenRefreshes.inc({ result: 'obtained' });
      this.logger.info({ expiresAt: issued.expiresAt.toISOString() }, 'provider token refreshed');
      return this.current;
    } catch (error) {
      this.metrics.tokenRefreshes.inc({ result: 'failed' });
      await this.repository.releaseLease(this.cacheKey, this.owner);
      throw error;
    }
  }
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
