import { Injectable } from '@nestjs/common';
import type { PageRequest } from '../common/pagination';
import { keysetListStatementFor, keysetListStatements, keysetListValues, type ListFilter } from '../database/list-queries';
import { Database } from '../database/database';
import { column, sqlStatement, type RowOf } from '../database/sql-statement';
import { isUniqueViolation } from '../database/unique-violation';
import type { LinkedWallet, WalletLinkClaim, WalletLinkFilter, WalletLinkRecord } from './wallet-link.types';

/** The SQL of WalletLinksRepository, written out (listed in src/queries/wallet-links.repository.sql). */
const repository = 'wallet-links.repository';

/** matricule and apikey_encrypted are NULL only on PENDING rows (claims): every read below selects LINKED rows. */
const LINK_COLUMNS = {
  id: column.uuid,
  ownerId: column.text,
  email: column.text,
  phone: column.text,
  phoneCountry: column.text,
  matricule: column.text.orNull,
  apikeyEncrypted: column.text.orNull,
  createdAt: column.timestamptz,
};
const SELECT = (w: string) =>
  `${w}.id, ${w}.owner_id AS "ownerId", ${w}.email, ${w}.phone, ${w}.phone_country AS "phoneCountry", ${w}.matricule,
  ${w}.apikey_encrypted AS "apikeyEncrypted", ${w}.created_at AS "createdAt"`;

/**
 * The claim of an email: a PENDING row keyed by lower(email), or the takeover of a lapsed claim
 * (under a new id); no row when the email is linked or claimed by a live claim. $6 is the lease in seconds.
 */
const CLAIM = sqlStatement(
  repository,
  'claim',
  'wallet_links_claim',
  `
  INSERT INTO wallet_links (id, owner_id, email, email_key, phone, phone_country, status, claim_expires_at, created_at)
  VALUES (gen_random_uuid(), $1::text, $2::text, lower($2::text), $3::text, $4::text, 'PENDING',
          now() + make_interval(secs => $5::float8), now())
  ON CONFLICT (email_key) DO UPDATE
    SET id = EXCLUDED.id, owner_id = EXCLUDED.owner_id, email = EXCLUDED.email, phone = EXCLUDED.phone,
        phone_country = EXCLUDED.phone_country, claim_expires_at = EXCLUDED.claim_expires_at, created_at = EXCLUDED.created_at
    WHERE wallet_links.status = 'PENDING' AND wallet_links.claim_expires_at < now()
  RETURNING id::text AS id`,
  { id: column.text },
);

/** The claim $1 becomes the link, if it is still ours (still PENDING under that id); the unique matricule may refuse it (23505). */
const COMPLETE_CLAIM = sqlStatement(
  repository,
  'completeClaim',
  'wallet_links_complete_claim',
  `
  UPDATE wallet_links AS w SET matricule = $2::text, apikey_encrypted = $3::text, status = 'LINKED', claim_expires_at = NULL
  WHERE w.id = $1::uuid AND w.status = 'PENDING'
  RETURNING ${SELECT('w')}`,
  LINK_COLUMNS,
);

const RELEASE_CLAIM = sqlStatement(
  repository,
  'releaseClaim',
  'wallet_links_release_claim',
  `
  DELETE FROM wallet_links WHERE id = $1::uuid AND status = 'PENDING'`,
);

const FIND_BY_ID = sqlStatement(
  repository,
  'findById',
  'wallet_links_find',
  `
  SELECT ${SELECT('w')} FROM wallet_links w WHERE w.id = $1::uuid AND w.status = 'LINKED'`,
  LINK_COLUMNS,
);

/** Compared without case, as the one-link-per-email key (email_key, lower(email)) compares; oldest first. */
const FIND_BY_EMAIL = sqlStatement(
  repository,
  'findByEmail',
  'wallet_links_find_by_email',
  `
  SELECT ${SELECT('w')} FROM wallet_links w
  WHERE lower(w.email) = lower($1::text) AND w.status = 'LINKED'
  ORDER BY w.created_at, w.id`,
  LINK_COLUMNS,
);

const LIST_FILTERS: readonly ListFilter<WalletLinkFilter>[] = [['ownerId', 'owner', (n) => `w.owner_id = $${n}::text`]];
/** Only links are listed: the claims (PENDING rows) are left out before the keyset conditions apply. */
const LIST = keysetListStatements({
  repository,
  usedBy: 'list',
  prefix: 'wallet_links_page',
  from: `(SELECT * FROM wallet_links WHERE status = 'LINKED') w`,
  time: 'w.created_at',
  select: SELECT('w'),
  columns: LINK_COLUMNS,
  filters: LIST_FILTERS,
});

/** Wallet links as stored: the apikey only ever as ciphertext. */
@Injectable()
export class WalletLinksRepository {
  constructor(private readonly database: Database) {}

  /**
   * Claims the email for one request, on whatever instance: a PENDING row keyed by lower(email),
   * inserted before the provider is asked. Undefined when the email is linked or claimed by a live
   * claim; a claim whose holder died (lapsed `claim_expires_at`) is taken over, under a new id.
   */
  async claim(claim: WalletLinkClaim, leaseMs: number): Promise<string | undefined> {
    const [row] = await this.database.run(CLAIM, [claim.ownerId, claim.email, claim.phone, claim.phoneCountry, leaseMs / 1000]);
    return row?.id;
  }

  /**
   * Turns the claim into the link. Undefined when the matricule is already stored (the unique
   * index decided) or the claim is no longer ours (it lapsed and was taken over).
   */
  async completeClaim(id: string, linked: LinkedWallet): Promise<WalletLinkRecord | undefined> {
    try {
      const [row] = await this.database.run(COMPLETE_CLAIM, [id, linked.matricule, linked.apikeyEncrypted]);
      return row ? toRecord(row) : undefined;
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  /** Gives the email back after the provider was not asked, refused, or could not be read. */
  async releaseClaim(id: string): Promise<void> {
    await this.database.run(RELEASE_CLAIM, [id]);
  }

  async findById(id: string): Promise<WalletLinkRecord | undefined> {
    const [row] = await this.database.run(FIND_BY_ID, [id]);
    return row ? toRecord(row) : undefined;
  }

  /** Links of this email, compared without case (the provider keys its users by email that way). */
  async findByEmail(email: string): Promise<WalletLinkRecord[]> {
    return (await this.database.run(FIND_BY_EMAIL, [email])).map(toRecord);
  }

  async list(filter: WalletLinkFilter, page: PageRequest): Promise<WalletLinkRecord[]> {
    const rows = await this.database.run(keysetListStatementFor(LIST, LIST_FILTERS, filter), keysetListValues(LIST_FILTERS, filter, page));
    return rows.map(toRecord);
  }
}

/** A LINKED row (the reads above select only those) always has its matricule and apikey. */
function toRecord(row: RowOf<typeof LINK_COLUMNS>): WalletLinkRecord {
  return { ...row, matricule: row.matricule ?? '', apikeyEncrypted: row.apikeyEncrypted ?? '' };
}
