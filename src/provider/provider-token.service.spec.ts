import type { Logger } from 'pino';
import { ConfigService } from '@nestjs/config';
import { SecretBox } from '../common/secret-box';
import type { AppConfig } from '../config/app-config';
import type { MetricsService } from '../metrics/metrics.service';
import type { ProviderAuthClient } from './clients/provider-auth.client';
import type { FreshTokenReading, ProviderTokenRepository } from './provider-token.repository';
import { ProviderTokenService, type ProviderBearer } from './provider-token.service';

const KEY = Buffer.alloc(32, 7);
const box = new SecretBox(KEY);
const HOUR = 3_600_000;

/**
 * The token row as the database keeps it, on a database clock equal to ours. Each read of the
 * clock first waits `queueWaitMs` (the pool's queue in a burst), then takes 1 ms there and back.
 */
class FakeTokenRow {
  token?: { value: string; obtainedAt: number; expiresAt: number };
  queueWaitMs = 0;
  databaseNowReads = 0;

  constructor(private readonly clock: { now: number }) {}

  store(value: string, obtainedAt: number) {
    this.token = { value, obtainedAt, expiresAt: obtainedAt + HOUR };
  }

  readonly repository = {
    findFresh: (_cacheKey: string, notBefore?: Date): Promise<FreshTokenReading> => {
      const readAt = this.roundTrip();
      const token = this.token;
      const fresh = token && token.expiresAt - 5 * 60_000 > readAt && (!notBefore || token.obtainedAt > notBefore.getTime());
      return Promise.resolve({
        databaseNow: new Date(readAt),
        stored: fresh
          ? {
              tokenEncrypted: box.encrypt(token.value, 'provider-token'),
              obtainedAt: new Date(token.obtainedAt),
              expiresAt: new Date(token.expiresAt),
            }
          : undefined,
      });
    },
    databaseNow: (): Promise<Date> => {
      this.databaseNowReads += 1;
      return Promise.resolve(new Date(this.roundTrip()));
    },
    tryClaimRefresh: () => Promise.resolve({ claimedAt: new Date(this.roundTrip()) }),
    storeRefreshed: (_cacheKey: string, _sealed: string, _expiresAt: Date, obtainedAt: Date) => Promise.resolve(obtainedAt),
    releaseLease: () => Promise.resolve(),
  };

  /** Advances the clock over one round trip; answers the moment the database read its clock. */
  private roundTrip(): number {
    const readAt = this.clock.now + this.queueWaitMs + 0.5;
    this.clock.now = readAt + 0.5;
    return readAt;
  }
}

describe('ProviderTokenService', () => {
  const clock = { now: 1_000_000 };
  let row: FakeTokenRow;
  let issued: string[];
  let service: ProviderTokenService;

  beforeEach(() => {
    clock.now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => Math.floor(clock.now));
    row = new FakeTokenRow(clock);
    issued = [];
    const authClient = {
      issueToken: () => {
        const token = `issued-${issued.length + 1}`;
        issued.push(token);
        return Promise.resolve({ token, expiresAt: new Date(clock.now + HOUR) });
      },
    } as unknown as ProviderAuthClient;
    const config = new ConfigService<AppConfig, true>({
      dataEncryptionKey: KEY,
      provider: { baseUrl: 'http://provider.test', apiKey: 'key', timeoutMs: 1_000 },
    });
    const logger = { info: jest.fn(), error: jest.fn() } as unknown as Logger;
    const metrics = { tokenRefreshes: { inc: jest.fn() } } as unknown as MetricsService;
    service = new ProviderTokenService(row.repository as unknown as ProviderTokenRepository, authClient, config, logger, metrics);
  });
  afterEach(() => jest.restoreAllMocks());

  /** This instance holds `first`; another instance then renews the row at `renewedAt`. */
  async function holdThenRenewElsewhere(renewedAt: number): Promise<ProviderBearer> {
    row.store('first', clock.now - 100);
    const first = await service.getBearer();
    expect(first.token).toBe('first');
    clock.now = renewedAt;
    row.store('renewed-elsewhere', renewedAt);
    return first;
  }

  it('a request refused before another instance renewed the token takes that renewal, even after a clock reading that waited in the queue', async () => {
    const began = clock.now + 5;
    const first = await holdThenRenewElsewhere(began + 2);
    // The first refused request's renewal reads the row after waiting 6 ms in the pool's queue:
    // taken as is, that reading puts the database clock 3 ms ahead of ours.
    row.queueWaitMs = 6;
    clock.now += 2;
    expect((await service.renewAfterRejection(first, began)).token).toBe('renewed-elsewhere');
    // The second began together with the first: the renewal was asked for after it began.
    row.queueWaitMs = 0;
    expect((await service.renewAfterRejection(first, began)).token).toBe('renewed-elsewhere');
    expect(issued).toEqual([]);
  });

  it('a request that began after another instance renewed the token asks the provider for a newer one', async () => {
    const first = await holdThenRenewElsewhere(clock.now + 10);
    const began = clock.now + 5;
    clock.now = began + 3;
    expect((await service.renewAfterRejection(first, began)).token).toBe('issued-1');
    expect(issued).toEqual(['issued-1']);
  });

  it('reads the database clock afresh, once for concurrent callers, when its last sample is too old to trust', async () => {
    const first = await holdThenRenewElsewhere(clock.now + 60_000);
    const began = clock.now - 10;
    const renewed = await Promise.all([1, 2, 3].map(() => service.renewAfterRejection(first, began)));
    expect(renewed.map((bearer) => bearer.token)).toEqual(['renewed-elsewhere', 'renewed-elsewhere', 'renewed-elsewhere']);
    expect(row.databaseNowReads).toBe(1);
    expect(issued).toEqual([]);
  });
});
