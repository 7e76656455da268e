import type { SecretBox } from '../common/secret-box';
import { ID_NUMBER_PURPOSE } from '../cards/card-users.service';
import { TOKEN_PURPOSE } from '../provider/provider-token.service';
import { apikeyPurpose } from '../wallet-links/wallet-link.types';
import { webhookSecretPurpose } from '../webhooks/webhook-endpoints.types';
import {
  SEALED_COLUMNS,
  type ResealedValue,
  type SealedColumn,
  type SealedColumnName,
  type SealedValue,
  type SealedValuesRepository,
} from './sealed-values.repository';

/** The associated data each column's values are sealed with (the purpose their service gives SecretBox). */
const PURPOSE_OF: Record<SealedColumnName, (value: SealedValue) => string | undefined> = {
  'wallet_links.apikey_encrypted': (value) => (value.context === null ? undefined : apikeyPurpose(value.context)),
  'provider_tokens.token_encrypted': () => TOKEN_PURPOSE,
  'card_users.id_number_encrypted': () => ID_NUMBER_PURPOSE,
  'webhook_endpoints.secret_encrypted': (value) => webhookSecretPurpose(value.key),
  'webhook_endpoints.previous_secret_encrypted': (value) => webhookSecretPurpose(value.key),
};

/** What the re-encryption did to one column. */
export interface ColumnReencryption {
  column: SealedColumnName;
  /** Sealed again with the current key. */
  resealed: number;
  /** Changed by a running instance between the read and the write: left as that instance wrote it. */
  changedMeanwhile: number;
  /** Opened by no configured key (or with no purpose to open it with): left as they are, their keys listed. */
  unreadable: string[];
  /** Pages read. */
  batches: number;
}

export interface ReencryptionOptions {
  /** Values read and written per statement. */
  batchSize: number;
  /** Told after each page is written (the progress line; a test stops a run there). */
  afterBatch?: (column: SealedColumnName, done: ColumnReencryption) => void | Promise<void>;
}

/**
 * Seals again with the current key every stored value that is not sealed with it (a previous key's,
 * or a `v1` value that names no key), column by column, one page per statement: each page is
 * committed as it goes, so a run stopped anywhere is resumed by running it again (what is done is
 * no longer selected). A value is written back only where its row still holds the text that was
 * read (compare-and-set), so a running instance's concurrent write is never overwritten. Values
 * that no configured key opens are counted and left alone: the previous keys must not be removed
 * while any is left.
 */
export async function reencryptSealedValues(
  repository: SealedValuesRepository,
  box: SecretBox,
  options: ReencryptionOptions,
): Promise<ColumnReencryption[]> {
  const currentPrefix = `v2.${box.currentKeyId}.`;
  const results: ColumnReencryption[] = [];
  for (const sealedColumn of SEALED_COLUMNS) results.push(await reencryptColumn(repository, box, sealedColumn, currentPrefix, options));
  return results;
}

async function reencryptColumn(
  repository: SealedValuesRepository,
  box: SecretBox,
  sealedColumn: SealedColumn,
  currentPrefix: string,
  options: ReencryptionOptions,
): Promise<ColumnReencryption> {
  const done: ColumnReencryption = { column: sealedColumn.name, resealed: 0, changedMeanwhile: 0, unreadable: [], batches: 0 };
  const purposeOf = PURPOSE_OF[sealedColumn.name];
  let afterKey: string | undefined;
  for (;;) {
    const page = await repository.batch(sealedColumn, currentPrefix, afterKey, options.batchSize);
    if (page.length === 0) return done;
    done.batches++;
    afterKey = page[page.length - 1].key;
    const resealed: ResealedValue[] = [];
    for (const value of page) {
      const purpose = purposeOf(value);
      if (value.sealed === null) continue;
      if (purpose === undefined) {
        done.unreadable.push(value.key);
        continue;
      }
      try {
        const text = box.reseal(value.sealed, purpose);
        if (text !== undefined) resealed.push({ key: value.key, sealed: value.sealed, resealed: text });
      } catch {
        done.unreadable.push(value.key);
      }
    }
    const written = await repository.reseal(sealedColumn, resealed);
    done.resealed += written;
    done.changedMeanwhile += resealed.length - written;
    await options.afterBatch?.(sealedColumn.name, done);
    if (page.length < options.batchSize) return done;
  }
}

/** One line per column, then what the operator may do next. */
export function reencryptionReport(
  results: readonly ColumnReencryption[],
  keyId: string,
): { lines: string[]; unreadable: number; complete: boolean } {
  const lines = results.map((r) => {
    const extra = [
      ...(r.changedMeanwhile ? [`${r.changedMeanwhile} changed by a running instance meanwhile, left as written`] : []),
      ...(r.unreadable.length ? [`${r.unreadable.length} opened by no configured key (rows ${r.unreadable.join(', ')})`] : []),
    ];
    return `${r.column}: ${r.resealed} re-sealed${extra.length ? `; ${extra.join('; ')}` : ''}`;
  });
  const resealed = results.reduce((sum, r) => sum + r.resealed, 0);
  const unreadable = results.reduce((sum, r) => sum + r.unreadable.length, 0);
  const changed = results.reduce((sum, r) => sum + r.changedMeanwhile, 0);
  lines.push(`re-sealed: ${resealed} (current key id ${keyId})`);
  if (unreadable > 0) {
    lines.push(
      `${unreadable} stored values are sealed with a key that is not configured: keep DATA_ENCRYPTION_PREVIOUS_KEYS, add the missing key and run again.`,
    );
  } else if (changed > 0) {
    lines.push('Some values changed while this ran: run it again until it re-seals 0 before removing DATA_ENCRYPTION_PREVIOUS_KEYS.');
  } else {
    lines.push(
      'Every stored value is sealed with the current key: DATA_ENCRYPTION_PREVIOUS_KEYS can be removed (see docs/operations.md, Rotating secrets).',
    );
  }
  return { lines, unreadable, complete: unreadable === 0 && changed === 0 };
}
