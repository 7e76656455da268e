import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../database/prisma.service';

/**
 * Fresh = not within the refresh margin of expiring: five minutes, or a tenth of the lifetime for
 * short-lived tokens. Judged by the database clock, the one clock all instances share. With a
 * `notBefore` (after a 401), only a token obtained after that moment counts: an older one may
 * have been revoked with the one that was refused.
 */
const freshness = (table: string, notBefore?: Date) =>
  Prisma.sql`(${Prisma.raw(`${table}token_encrypted IS NOT NULL AND ${table}expires_at - LEAST(interval '5 minutes', (${table}expires_at - ${table}obtained_at) / 10) > now()`)}${
    notBefore ? Prisma.sql` AND ${Prisma.raw(`${table}obtained_at`)} > ${notBefore}` : Prisma.empty
  })`;

export interface StoredProviderToken {
  tokenEncrypted: string;
  expiresAt: Date;
  obtainedAt: Date;
  /** The database clock at the time of reading. */
  databaseNow: Date;
}

export interface ClaimedRefresh {
  /** Database time of the claim: the stored token's `obtained_at` (its request left after this). */
  claimedAt: Date;
}

/** The shared token row and its refresh lease. Timestamps come from the database clock, shared by all instances. */
@Injectable()
export class ProviderTokenRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The stored token if it is still fresh (and obtained after `notBefore`, when given). */
  async findFresh(cacheKey: string, notBefore?: Date): Promise<StoredProviderToken | undefined> {
    const rows = await this.prisma.$queryRaw<StoredProviderToken[]>`
      SELECT token_encrypted AS "tokenEncrypted", expires_at AS "expiresAt", obtained_at AS "obtainedAt", now() AS "databaseNow"
      FROM provider_tokens
      WHERE cache_key = ${cacheKey} AND ${freshness('', notBefore)}`;
    return rows[0];
  }

  /** The database clock (to relate this process's clock to the one all instances share). */
  async databaseNow(): Promise<Date> {
    const rows = await this.prisma.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
    return rows[0].now;
  }

  /**
   * Claims the right to refresh: succeeds for exactly one caller while no live lease exists.
   * Others see undefined and wait for the row to be filled. A fresh token in the row (obtained
   * after `notBefore`, when given) also means undefined: someone refreshed between our read and
   * this claim.
   */
  async tryClaimRefresh(cacheKey: string, owner: string, leaseMs: number, notBefore?: Date): Promise<ClaimedRefresh | undefined> {
    const rows = await this.prisma.$queryRaw<ClaimedRefresh[]>`
      INSERT INTO provider_tokens (cache_key, refresh_lease_until, refresh_lease_owner, updated_at)
      VALUES (${cacheKey}, now() + make_interval(secs => ${leaseMs / 1000}), ${owner}, now())
      ON CONFLICT (cache_key) DO UPDATE
        SET refresh_lease_until = EXCLUDED.refresh_lease_until, refresh_lease_owner = EXCLUDED.refresh_lease_owner, updated_at = now()
        WHERE (provider_tokens.refresh_lease_until IS NULL OR provider_tokens.refresh_lease_until < now())
          AND NOT ${freshness('provider_tokens.', notBefore)}
      RETURNING now()::timestamptz(3) AS "claimedAt"`;
    return rows[0];
  }

  /** Stores the token asked for after the claim made at `obtainedAt`; answers `obtained_at` as stored. */
  async storeRefreshed(cacheKey: string, tokenEncrypted: string, expiresAt: Date, obtainedAt: Date): Promise<Date> {
    const rows = await this.prisma.$queryRaw<{ obtainedAt: Date }[]>`
      UPDATE provider_tokens
      SET token_encrypted = ${tokenEncrypted}, expires_at = ${expiresAt}, obtained_at = ${obtainedAt},
          refresh_lease_until = NULL, refresh_lease_owner = NULL, updated_at = now()
      WHERE cache_key = ${cacheKey}
      RETURNING obtained_at AS "obtainedAt"`;
    return rows[0]?.obtainedAt ?? obtainedAt;
  }

  async releaseLease(cacheKey: string, owner: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE provider_tokens SET refresh_lease_until = NULL, refresh_lease_owner = NULL, updated_at = now()
      WHERE cache_key = ${cacheKey} AND refresh_lease_owner = ${owner}`;
  }
}
