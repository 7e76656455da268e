import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../database/prisma.service';

/**
 * Fresh = not within the refresh margin of expiring: five minutes, or a tenth of the lifetime for
 * short-lived tokens. Judged by the database clock, the one clock all instances share.
 */
const freshness = (table: string) =>
  Prisma.raw(
    `(${table}token_encrypted IS NOT NULL AND ${table}expires_at - LEAST(interval '5 minutes', (${table}expires_at - ${table}obtained_at) / 10) > now())`,
  );
const FRESH = freshness('');
const FRESH_EXISTING = freshness('provider_tokens.');

export interface StoredProviderToken {
  tokenEncrypted: string;
  expiresAt: Date;
  obtainedAt: Date;
}

/** The shared token row and its refresh lease. Timestamps come from the database clock, shared by all instances. */
@Injectable()
export class ProviderTokenRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The stored token if it is still fresh: not within its refresh margin of expiring. */
  async findFresh(cacheKey: string): Promise<StoredProviderToken | undefined> {
    const rows = await this.prisma.$queryRaw<StoredProviderToken[]>`
      SELECT token_encrypted AS "tokenEncrypted", expires_at AS "expiresAt", obtained_at AS "obtainedAt"
      FROM provider_tokens
      WHERE cache_key = ${cacheKey} AND ${FRESH}`;
    return rows[0];
  }

  /**
   * Claims the right to refresh: succeeds for exactly one caller while no live lease exists.
   * Others see false and wait for the row to be filled. A fresh token in the row also means
   * false: someone refreshed between our read and this claim.
   */
  async tryClaimRefresh(cacheKey: string, owner: string, leaseMs: number): Promise<boolean> {
    const claimed = await this.prisma.$executeRaw`
      INSERT INTO provider_tokens (cache_key, refresh_lease_until, refresh_lease_owner, updated_at)
      VALUES (${cacheKey}, now() + make_interval(secs => ${leaseMs / 1000}), ${owner}, now())
      ON CONFLICT (cache_key) DO UPDATE
        SET refresh_lease_until = EXCLUDED.refresh_lease_until, refresh_lease_owner = EXCLUDED.refresh_lease_owner, updated_at = now()
        WHERE (provider_tokens.refresh_lease_until IS NULL OR provider_tokens.refresh_lease_until < now())
          AND NOT (${FRESH_EXISTING})`;
    return claimed === 1;
  }

  async storeRefreshed(cacheKey: string, tokenEncrypted: string, expiresAt: Date): Promise<Date> {
    const rows = await this.prisma.$queryRaw<{ obtainedAt: Date }[]>`
      UPDATE provider_tokens
      SET token_encrypted = ${tokenEncrypted}, expires_at = ${expiresAt}, obtained_at = now(),
          refresh_lease_until = NULL, refresh_lease_owner = NULL, updated_at = now()
      WHERE cache_key = ${cacheKey}
      RETURNING obtained_at AS "obtainedAt"`;
    return rows[0]?.obtainedAt ?? new Date();
  }

  async releaseLease(cacheKey: string, owner: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE provider_tokens SET refresh_lease_until = NULL, refresh_lease_owner = NULL, updated_at = now()
      WHERE cache_key = ${cacheKey} AND refresh_lease_owner = ${owner}`;
  }

  /** Marks the token obtained at `obtainedAt` as dead, unless a newer one already replaced it. */
  async expireIfCurrent(cacheKey: string, obtainedAt: Date): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE provider_tokens SET expires_at = now(), updated_at = now()
      WHERE cache_key = ${cacheKey} AND obtained_at = ${obtainedAt}`;
  }
}
