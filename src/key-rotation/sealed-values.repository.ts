import { Injectable } from '@nestjs/common';
import { Database } from '../database/database';
import { column, sqlStatement } from '../database/sql-statement';

/** The SQL of SealedValuesRepository, written out (listed in src/queries/sealed-values.repository.sql). */
const repository = 'sealed-values.repository';

/** A column holding SecretBox texts sealed with DATA_ENCRYPTION_KEY. */
interface SealedColumnTable {
  /** `table.column`, as the re-encryption reports it. */
  readonly name: string;
  /** Its statements' names end with it (a prepared statement's name must stay well under 63 bytes). */
  readonly short: string;
  readonly table: string;
  readonly column: string;
  /** The row's key, and its PostgreSQL type. */
  readonly keyColumn: string;
  readonly keyType: 'uuid' | 'text';
  /** The column the value's purpose is bound to besides the key (wallet links: the matricule), if any. */
  readonly contextColumn?: string;
}

/** A sealed value as the re-encryption reads it: its row, its text, and what its purpose is made of. */
export interface SealedValue {
  key: string;
  sealed: string | null;
  context: string | null;
}

/** A value sealed again: the row, the text it was read with (compare-and-set), the new text. */
export interface ResealedValue {
  key: string;
  sealed: string;
  resealed: string;
}

/**
 * One page of a column's values not sealed with the current key (`$1` the prefix of those that are:
 * `v2.<keyId>.`), after the key `$2` (NULL for the first page), in key order, `$3` at most.
 */
function batchStatement(table: SealedColumnTable) {
  const key = table.keyColumn;
  return sqlStatement(
    repository,
    'SealedValuesRepository.batch',
    `keys_batch_${table.short}`,
    `
    SELECT ${key} AS "key", ${table.column} AS "sealed", ${table.contextColumn ?? 'NULL::text'} AS "context"
    FROM ${table.table}
    WHERE ${table.column} IS NOT NULL AND NOT starts_with(${table.column}, $1::text)
      AND ($2::${table.keyType} IS NULL OR ${key} > $2::${table.keyType})
    ORDER BY ${key}
    LIMIT $3::int`,
    { key: table.keyType === 'uuid' ? column.uuid : column.text, sealed: column.text.orNull, context: column.text.orNull },
  );
}

/**
 * Writes the new texts of a page, each only where the row still holds the text it was read with:
 * a value a live instance changed meanwhile (a refreshed token, a rotated webhook secret) is left
 * as that instance wrote it. Answers the keys written.
 */
function resealStatement(table: SealedColumnTable) {
  return sqlStatement(
    repository,
    'SealedValuesRepository.reseal',
    `keys_reseal_${table.short}`,
    `
    UPDATE ${table.table} AS t SET ${table.column} = u.resealed
    FROM unnest($1::${table.keyType}[], $2::text[], $3::text[]) AS u(key, sealed, resealed)
    WHERE t.${table.keyColumn} = u.key AND t.${table.column} = u.sealed
    RETURNING t.${table.keyColumn} AS "key"`,
    { key: table.keyType === 'uuid' ? column.uuid : column.text },
  );
}

function sealedColumn(table: SealedColumnTable) {
  return { ...table, batch: batchStatement(table), reseal: resealStatement(table) };
}

/** Every column of the database that holds a value sealed with DATA_ENCRYPTION_KEY. */
export const SEALED_COLUMNS = [
  sealedColumn({
    name: 'wallet_links.apikey_encrypted',
    short: 'wallet_apikey',
    table: 'wallet_links',
    column: 'apikey_encrypted',
    keyColumn: 'id',
    keyType: 'uuid',
    contextColumn: 'matricule',
  }),
  sealedColumn({
    name: 'provider_tokens.token_encrypted',
    short: 'provider_token',
    table: 'provider_tokens',
    column: 'token_encrypted',
    keyColumn: 'cache_key',
    keyType: 'text',
  }),
  sealedColumn({
    name: 'card_users.id_number_encrypted',
    short: 'card_user_id_number',
    table: 'card_users',
    column: 'id_number_encrypted',
    keyColumn: 'id',
    keyType: 'uuid',
  }),
  sealedColumn({
    name: 'webhook_endpoints.secret_encrypted',
    short: 'webhook_secret',
    table: 'webhook_endpoints',
    column: 'secret_encrypted',
    keyColumn: 'id',
    keyType: 'uuid',
  }),
  sealedColumn({
    name: 'webhook_endpoints.previous_secret_encrypted',
    short: 'webhook_previous_secret',
    table: 'webhook_endpoints',
    column: 'previous_secret_encrypted',
    keyColumn: 'id',
    keyType: 'uuid',
  }),
] as const;

export type SealedColumn = (typeof SEALED_COLUMNS)[number];
export type SealedColumnName = SealedColumn['name'];

/** The sealed values of the database, for `npm run keys:reencrypt`: read page by page, written back by compare-and-set. */
@Injectable()
export class SealedValuesRepository {
  constructor(private readonly database: Database) {}

  /** Up to `limit` values of `sealedColumn` not sealed under `currentPrefix`, after `afterKey`, in key order. */
  async batch(sealedColumn: SealedColumn, currentPrefix: string, afterKey: string | undefined, limit: number): Promise<SealedValue[]> {
    return this.database.run(sealedColumn.batch, [currentPrefix, afterKey ?? null, limit]);
  }

  /** Writes each new text where the row still holds the old one; answers how many were written. */
  async reseal(sealedColumn: SealedColumn, values: readonly ResealedValue[]): Promise<number> {
    if (values.length === 0) return 0;
    const rows = await this.database.run(sealedColumn.reseal, [
      values.map((value) => value.key),
      values.map((value) => value.sealed),
      values.map((value) => value.resealed),
    ]);
    return rows.length;
  }
}
