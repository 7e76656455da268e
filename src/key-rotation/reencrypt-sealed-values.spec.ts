import { randomBytes } from 'node:crypto';
import { SecretBox } from '../common/secret-box';
import { apikeyPurpose } from '../wallet-links/wallet-link.types';
import { reencryptionReport, reencryptSealedValues } from './reencrypt-sealed-values';
import type { ResealedValue, SealedColumn, SealedValue, SealedValuesRepository } from './sealed-values.repository';

/** The wallet-links column in memory, read in key order as the statements do, written by compare-and-set. */
class MemoryColumn {
  readonly rows = new Map<string, SealedValue>();
  pagesRead = 0;
  /** Called between the read of a page and its write: a running instance's write. */
  beforeWrite?: () => void;

  asRepository(): SealedValuesRepository {
    return {
      batch: async (column: SealedColumn, currentPrefix: string, afterKey: string | undefined, limit: number) => {
        if (column.name !== 'wallet_links.apikey_encrypted') return [];
        this.pagesRead++;
        return [...this.rows.values()]
          .filter((row) => row.sealed !== null && !row.sealed.startsWith(currentPrefix) && (afterKey === undefined || row.key > afterKey))
          .sort((a, b) => a.key.localeCompare(b.key))
          .slice(0, limit)
          .map((row) => ({ ...row }));
      },
      reseal: async (_column: SealedColumn, values: readonly ResealedValue[]) => {
        this.beforeWrite?.();
        let written = 0;
        for (const value of values) {
          const row = this.rows.get(value.key);
          if (row?.sealed !== value.sealed) continue;
          row.sealed = value.resealed;
          written++;
        }
        return written;
      },
    } as unknown as SealedValuesRepository;
  }
}

describe('reencryptSealedValues', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);
  const before = new SecretBox(oldKey);
  const box = new SecretBox(newKey, [oldKey]);
  const link = (key: string, matricule: string | null, sealedBy: SecretBox = before) => ({
    key,
    sealed: sealedBy.encrypt(`apikey-${key}`, apikeyPurpose(matricule ?? 'none')),
    context: matricule,
  });

  it('re-seals page by page what is not under the current key, and leaves what is', async () => {
    const memory = new MemoryColumn();
    for (const row of [link('a', 'MAT1'), link('b', 'MAT2'), link('c', 'MAT3', box), link('d', 'MAT4'), link('e', 'MAT5')])
      memory.rows.set(row.key, row);
    const current = memory.rows.get('c')!.sealed;
    const [walletLinks] = await reencryptSealedValues(memory.asRepository(), box, { batchSize: 2 });
    expect(walletLinks).toEqual({ column: 'wallet_links.apikey_encrypted', resealed: 4, changedMeanwhile: 0, unreadable: [], batches: 2 });
    expect(memory.rows.get('c')!.sealed).toBe(current);
    for (const row of memory.rows.values()) {
      expect(box.isCurrent(row.sealed!)).toBe(true);
      expect(new SecretBox(newKey).decrypt(row.sealed!, apikeyPurpose(row.context!))).toBe(`apikey-${row.key}`);
    }
    const again = await reencryptSealedValues(memory.asRepository(), box, { batchSize: 2 });
    expect(again[0]).toMatchObject({ resealed: 0, batches: 0 });
  });

  it('counts and lists, without stopping, the values no configured key opens, and never overwrites a concurrent write', async () => {
    const memory = new MemoryColumn();
    const stranger = new SecretBox(randomBytes(32));
    for (const row of [link('a', 'MAT1'), link('b', 'MAT2', stranger), link('c', null), link('d', 'MAT4')]) memory.rows.set(row.key, row);
    memory.rows.get('c')!.context = null;
    const written = box.encrypt('written-by-an-instance', apikeyPurpose('MAT4'));
    memory.beforeWrite = () => {
      memory.rows.get('d')!.sealed = written;
      memory.beforeWrite = undefined;
    };
    const results = await reencryptSealedValues(memory.asRepository(), box, { batchSize: 10 });
    expect(results[0]).toEqual({
      column: 'wallet_links.apikey_encrypted',
      resealed: 1,
      changedMeanwhile: 1,
      unreadable: ['b', 'c'],
      batches: 1,
    });
    expect(memory.rows.get('d')!.sealed).toBe(written);

    const report = reencryptionReport(results, box.currentKeyId);
    expect(report).toMatchObject({ unreadable: 2, complete: false });
    expect(report.lines[0]).toBe(
      'wallet_links.apikey_encrypted: 1 re-sealed; 1 changed by a running instance meanwhile, left as written; 2 opened by no configured key (rows b, c)',
    );
    expect(report.lines).toContain(`re-sealed: 1 (current key id ${box.currentKeyId})`);
    expect(report.lines.at(-1)).toMatch(/keep DATA_ENCRYPTION_PREVIOUS_KEYS/);
  });

  it('tells the operator the previous keys can go only when nothing is left under them', () => {
    const clean = [{ column: 'card_users.id_number_encrypted' as const, resealed: 3, changedMeanwhile: 0, unreadable: [], batches: 1 }];
    expect(reencryptionReport(clean, 'kid').complete).toBe(true);
    expect(reencryptionReport(clean, 'kid').lines.at(-1)).toMatch(/DATA_ENCRYPTION_PREVIOUS_KEYS can be removed/);
    const raced = [{ ...clean[0], changedMeanwhile: 1 }];
    expect(reencryptionReport(raced, 'kid')).toMatchObject({ complete: false, unreadable: 0 });
    expect(reencryptionReport(raced, 'kid').lines.at(-1)).toMatch(/run it again/);
  });
});
