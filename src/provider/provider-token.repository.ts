import { Injectable } from '@nestjs/common';
import { Database } from '../database/database';
import { column, sqlStatement } from '../database/sql-statement';

/** The SQL of ProviderTokenRepository, written out (listed in src/queries/provider-token.repository.sql). */
const repository = 'provider-token.repository';

/**
 * Fresh = not within the refresh margin of expiring: five minutes, or a tenth of the lifetime for
 * short-lived tokens. Judged by the database clock, the one clock all instances share. With a
 * `notBefore` (the parameter named here, after a 401), only a token obtained after that moment
 * counts: an older one may have been revoked with the one that was refused.
 */
const freshness = (table: string, notBefore: string) =>
  `(${table}token_encrypted IS NOT NULL AND ${table}expires_at - LEAST(interval '5 minutes', (${table}expires_at - ${table}obtained_at) / 10) > now()
    AND (${notBefore}::timestamptz IS NULL OR ${table}obtained_at > ${notBefore}::timestamptz))`;

const FIND_FRESH = sqlStatement(
  repository,
  'findFresh',
  'provider_token_find_fresh',
  `
  SELECT t.token_encrypted AS "tokenEncrypted", t.expires_at AS "expiresAt", t.obtained_at AS "obtainedAt", now() AS "databaseNow"
  FROM (VALUES (1)) AS clock
  LEFT JOIN provider_tokens t ON t.cache_key = $1 AND ${freshness('t.', '$2')}`,
  {
    tokenEncrypted: column.text.orNull,
    expiresAt: column.timestamptz.orNull,
    obtainedAt: column.timestamptz.orNull,
    databaseNow: column.timestamptz,
  },
);

const DATABASE_NOW = sqlStatement(
  repository,
  'databaseNow',
  'provider_token_database_now',
  `
  SELECT now() AS now`,
  { now: column.timestamptz },
);

const TRY_CLAIM_REFRESH = sqlStatement(
  repository,
  'tryClaimRefresh',
  'provider_token_claim_refresh',
  `
  INSERT INTO provider_tokens (cache_key, refresh_lease_until, refresh_lease_owner, updated_at)
  VALUES ($1, now() + make_interval(secs => $3::float8), $2, now())
  ON CONFLICT (cache_key) DO UPDATE
    SET refresh_lease_until = EXCLUDED.refresh_lease_until, refresh_lease_owner = EXCLUDED.refresh_lease_owner, updated_at = now()
    WHERE (provider_tokens.refresh_lease_until IS NULL OR provider_tokens.refresh_lease_until < now())
      AND NOT ${freshness('provider_tokens.', '$4')}
  RETURNING now()::timestamptz(3) AS "claimedAt"`,
  { claimedAt: column.timestamptz },
);

const STORE_REFRESHED = sqlStatement(
  repository,
  'storeRefreshed',
  'provider_token_store_refreshed',
  `
  UPDATE provider_tokens
  SET token_encrypted = $2, expires_at = $3::timestamptz, obtained_at = $4::timestamptz,
      refresh_lease_until = NULL, refresh_lease_owner = NULL, updated_at = now()
  WHERE cache_key = $1
  RETURNING obtained_at AS "obtainedAt"`,
  { obtainedAt: column.timestamptz.orNull },
);

const RELEASE_LEASE = sqlStatement(
  repository,
  'releaseLease',
  'provider_token_release_lease',
  `
  UPDATE provider_tokens SET refresh_lease_until = NULL, refresh_lease_owner = NULL, updated_at = now()
  WHERE cache_key = $1 AND refresh_lease_owner = $2`,
);

export interface StoredProviderToken {
  tokenEncrypted: string;
  expiresAt: Date;
  obtainedAt: Date;
}

export interface FreshTokenReading {
  /** The database clock at the time of reading (every read samples it, found or not). */
  databaseNow: Date;
  stored?: StoredProviderToken;
}

export interface ClaimedRefresh {
  /** Database time of the claim: the stored token's `obtained_at` (its request left after this). */
  claimedAt: Date;
}

/** The shared token row and its refresh lease. Timestamps come from the database clock, shared by all instances. */
@Injectable()
export class ProviderTokenRepository {
  constructor(private readonly database: Database) {}

  /** The stored token if it is still fresh (and obtained after `notBefore`, when given), and the database clock. */
  async findFresh(cacheKey: string, notBefore?: Date): Promise<FreshTokenReading> {
    const [row] = await this.database.run(FIND_FRESH, [cacheKey, notBefore ?? null]);
    const { tokenEncrypted, expiresAt, obtainedAt, databaseNow } = row;
    // A fresh token has its times (the freshness condition reads them).
    const fresh = tokenEncrypted !== null && expiresAt !== null && obtainedAt !== null;
    return { databaseNow, stored: fresh ? { tokenEncrypted, expiresAt, obtainedAt } : undefined };
  }

  /** The database clock (to relate this process's clock to the one all instances share). */
  async databaseNow(): Promise<Date> {
    const [row] = await this.database.run(DATABASE_NOW, []);
    return row.now;
  }

  /**
   * Claims the right to refresh: succeeds for exactly one caller while no live lease exists.
   * Others see undefined and wait for the row to be filled. A fresh token in the row (obtained
   * after `notBefore`, when given) also means undefined: someone refreshed between our read and
   * this claim.
   */
  async tryClaimRefresh(cacheKey: string, owner: string, leaseMs: number, notBefore?: Date): Promise<ClaimedRefresh | undefined> {
    const [row] = await this.database.run(TRY_CLAIM_REFRESH, [cacheKey, owner, leaseMs / 1000, notBefore ?? null]);
    return row;
  }

  /** Stores the token asked for after the claim made at `obtainedAt`; answers `obtained_at` as stored. */
  async storeRefreshed(cacheKey: string, tokenEncrypted: string, expiresAt: Date, obtainedAt: Date): Promise<Date> {
    const [row] = await this.database.run(STORE_REFRESHED, [cacheKey, tokenEncrypted, expiresAt, obtainedAt]);
    return row?.obtainedAt ?? obtainedAt;
  }

  async releaseLease(cacheKey: string, owner: string): Promise<void> {
    await this.database.run(RELEASE_LEASE, [cacheKey, owner]);
  }
}
