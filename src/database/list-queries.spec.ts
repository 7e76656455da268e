import { keysetListStatementFor, keysetListStatements, keysetListValues, type ListFilter } from './list-queries';
import { column } from './sql-statement';

interface Filter {
  ownerId?: string;
  status?: string;
}

const FILTERS: readonly ListFilter<Filter>[] = [
  ['ownerId', 'owner', (n) => `t.owner_id = $${n}::text`],
  ['status', 'status', (n) => `t.status = $${n}::text`],
];
const LIST = keysetListStatements({
  repository: 'list-queries.spec',
  usedBy: 'test',
  prefix: 'test_list_queries',
  from: 'things t',
  time: 't.created_at',
  select: 't.id',
  columns: { id: column.uuid },
  filters: FILTERS,
});

const at = new Date('2026-11-23T10:00:00.000Z');
const id = '0f337719-beae-4580-8ccb-ad6a610d08cf';

describe('keysetListStatements', () => {
  it('one statement per set of filters, each condition numbered after the five fixed parameters', () => {
    expect(LIST.map((s) => s.name)).toEqual([
      'test_list_queries_all',
      'test_list_queries_owner',
      'test_list_queries_status',
      'test_list_queries_owner_status',
    ]);
    expect(LIST[0].text).not.toContain('$6');
    expect(LIST[2].text).toContain('t.status = $6::text');
    expect(LIST[3].text).toContain('t.owner_id = $6::text');
    expect(LIST[3].text).toContain('t.status = $7::text');
    expect(LIST[3].text).toContain('ORDER BY t.created_at DESC, t.id DESC');
  });
});

describe('keysetListStatementFor and keysetListValues', () => {
  it('the first page without filters: infinite bounds, no position, the limit', () => {
    expect(keysetListStatementFor<(typeof LIST)[number], Filter>(LIST, FILTERS, {})).toBe(LIST[0]);
    expect(keysetListValues(FILTERS, {}, { limit: 51 })).toEqual([
      '-infinity',
      'infinity',
      'infinity',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      51,
    ]);
  });

  it('a later page in a window [from, to), with the filters set, in the filters’ order', () => {
    const from = new Date('2026-11-01T00:00:00.000Z');
    const to = new Date('2026-12-01T00:00:00.000Z');
    expect(keysetListStatementFor<(typeof LIST)[number], Filter>(LIST, FILTERS, { status: 'LINKED' })).toBe(LIST[2]);
    expect(keysetListStatementFor(LIST, FILTERS, { status: 'LINKED', ownerId: 'alice' })).toBe(LIST[3]);
    expect(keysetListValues(FILTERS, { status: 'LINKED', ownerId: 'alice', from, to }, { limit: 11, after: { at, id } })).toEqual([
      from,
      to,
      at,
      id,
      11,
      'alice',
      'LINKED',
    ]);
  });
});
