import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { BODY_TABLES } from './erasure-bodies.repository';
import { NOT_PERSONAL, PERSONAL_DATA_REGISTER } from './personal-data.register';

/** Every column of prisma/schema.prisma: its table, its name in the database, its Prisma type. */
function schemaColumns(): { table: string; column: string; type: string }[] {
  const schema = readFileSync(resolve(__dirname, '../../prisma/schema.prisma'), 'utf8');
  const columns: { table: string; column: string; type: string }[] = [];
  for (const [, body] of schema.matchAll(/^model \w+ \{\n([\s\S]*?)^\}/gm)) {
    const table = /@@map\("(\w+)"\)/.exec(body)?.[1];
    if (!table) throw new Error('a model without @@map');
    for (const line of body.split('\n')) {
      const [name, declared, ...attributes] = line.trim().split(/\s+/);
      if (!declared || name.startsWith('//') || name.startsWith('@@')) continue;
      const type = declared.replace(/[?[\]]/g, '');
      const list = declared.includes('[]') ? '[]' : '';
      const rest = attributes.join(' ');
      // Relation fields (another model, or a list of one) are not columns.
      if (
        /^[A-Z]/.test(type) &&
        !['String', 'Json', 'Int', 'BigInt', 'Boolean', 'DateTime', 'Decimal'].includes(type) &&
        !schema.includes(`enum ${type} {`)
      )
        continue;
      columns.push({ table, column: /@map\("(\w+)"\)/.exec(rest)?.[1] ?? name, type: `${type}${list ?? ''}` });
    }
  }
  return columns;
}

/** Names that say a column may hold a person's data (one of its snake_case words). */
const PERSONAL_WORDS = [
  'name',
  'email',
  'phone',
  'msisdn',
  'wallet',
  'address',
  'birth',
  'dob',
  'identity',
  'document',
  'contact',
  'payer',
  'city',
  'postal',
  'state',
  'country',
  'ip',
  'body',
  'headers',
  'query',
  'snapshot',
  'number',
  'detail',
  'note',
  'message',
  'reason',
];
const looksPersonal = ({ column, type }: { column: string; type: string }) =>
  type === 'Json' || ((type === 'String' || type === 'String[]') && column.split('_').some((word) => PERSONAL_WORDS.includes(word)));

describe('the personal-data register', () => {
  const columns = schemaColumns();
  const key = (c: { table: string; column: string }) => `${c.table}.${c.column}`;

  it('reads the schema', () => {
    expect(columns).toEqual(expect.arrayContaining([{ table: 'orders', column: 'payer_email', type: 'String' }]));
    expect(columns.length).toBeGreaterThan(100);
  });

  it('lists every column that looks personal (by name, or as a JSON body), or says why it is not personal', () => {
    const registered = new Set(PERSONAL_DATA_REGISTER.map(key));
    const unexplained = columns
      .filter(looksPersonal)
      .map(key)
      .filter((name) => !registered.has(name) && NOT_PERSONAL[name] === undefined);
    expect(unexplained).toEqual([]);
  });

  it('names only columns that exist, each once, never both personal and not', () => {
    const existing = new Set(columns.map(key));
    const named = [...PERSONAL_DATA_REGISTER.map(key), ...Object.keys(NOT_PERSONAL)];
    expect(named.filter((name) => !existing.has(name))).toEqual([]);
    expect(new Set(named).size).toBe(named.length);
  });

  it('is what the erasure walks: each body table reads exactly its register columns (known values, or the mark)', () => {
    const recordTables = ['orders', 'card_users', 'wallet_links'];
    for (const table of new Set(PERSONAL_DATA_REGISTER.map((entry) => entry.table))) {
      const registered = PERSONAL_DATA_REGISTER.filter((entry) => entry.table === table).map((entry) => entry.column);
      const body = BODY_TABLES.find((candidate) => candidate.table === table);
      if (recordTables.includes(table)) expect([table, body]).toEqual([table, undefined]);
      else expect([table, body?.columns.map((c) => c.name).sort()]).toEqual([table, [...registered].sort()]);
    }
    expect(BODY_TABLES.length + recordTables.length).toBe(new Set(PERSONAL_DATA_REGISTER.map((entry) => entry.table)).size);
  });
});
