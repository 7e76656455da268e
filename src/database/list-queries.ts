import type { PageRequest } from '../common/pagination';
import { sqlStatement, type Columns, type RowOf, type SqlStatement } from './sql-statement';

/** One equality filter of a list: the filter's field, its short name (in statement names) and its condition on parameter `$n`. */
export type ListFilter<F> = readonly [field: Exclude<keyof F, 'from' | 'to'> & string, short: string, condition: (n: number) => string];

export interface KeysetListDefinition<C extends Columns, F> {
  repository: string;
  usedBy: string;
  /** Statement names are `${prefix}_${short names of the filters set}`, or `${prefix}_all`. */
  prefix: string;
  /** `FROM …` with the table's alias, e.g. `cards c`. */
  from: string;
  /** The alias's time column the list is ordered by, e.g. `c.created_at`; the id is `${alias}.id`. */
  time: string;
  select: string;
  columns: C;
  filters: readonly ListFilter<F>[];
  /** The position's id as the table spells its ids; a cursor carries a UUID (`$4`). Default `$4::uuid`. */
  positionId?: string;
}

/**
 * The statements of one keyset-paginated list: one named statement per set of equality filters
 * (2^filters), each built from the same fixed fragments, rather than one statement with
 * `$n IS NULL OR column = $n` conditions: a prepared statement runs on a generic plan after five
 * executions, and a generic plan cannot know which of those conditions are switched off, so it
 * would filter every row of the time index instead of scanning the filter's own index. Newest first
 * by (time, id): the id breaks ties, so that no row is skipped or shown twice across pages, and the
 * redundant `time <= $3` starts the index scan at the position. Parameters: `keysetListValues`.
 */
export function keysetListStatements<C extends Columns, F>(list: KeysetListDefinition<C, F>): SqlStatement<RowOf<C>>[] {
  const alias = list.time.split('.')[0];
  return Array.from({ length: 1 << list.filters.length }, (_, set) => {
    const filters = list.filters.filter((_filter, i) => set & (1 << i));
    const conditions = filters.map(([, , condition], i) => `\n        AND ${condition(6 + i)}`).join('');
    return sqlStatement(
      list.repository,
      list.usedBy,
      `${list.prefix}_${filters.map(([, short]) => short).join('_') || 'all'}`,
      `
      SELECT ${list.select}
      FROM ${list.from}
      WHERE ${list.time} >= $1::timestamptz AND ${list.time} < $2::timestamptz
        AND ${list.time} <= $3::timestamptz AND (${list.time}, ${alias}.id) < ($3::timestamptz, ${list.positionId ?? '$4::uuid'})${conditions}
      ORDER BY ${list.time} DESC, ${alias}.id DESC
      LIMIT $5::int`,
      list.columns,
    );
  });
}

/**
 * The parameters of a keyset list statement: the window [from, to) ($1, $2), the position after
 * which the page starts ($3 and $4: a time and an id), the limit ($5), then the value of each filter
 * set, in the filters' order. An absent bound is an infinite one, so that the statement stays one
 * per set of equality filters.
 */
export function keysetListValues<F extends object>(
  filters: readonly ListFilter<F>[],
  filter: F & { from?: Date; to?: Date },
  page: PageRequest,
): unknown[] {
  const values = filter as Record<string, unknown>;
  return [
    filter.from ?? '-infinity',
    filter.to ?? 'infinity',
    page.after?.at ?? 'infinity',
    page.after?.id ?? 'ffffffff-ffff-ffff-ffff-ffffffffffff',
    page.limit,
    ...filters.flatMap(([field]) => (values[field] === undefined ? [] : [values[field]])),
  ];
}

/** The statement of a list (from keysetListStatements) for the equality filters `filter` sets. */
export function keysetListStatementFor<S, F extends object>(statements: readonly S[], filters: readonly ListFilter<F>[], filter: F): S {
  const values = filter as Record<string, unknown>;
  return statements[filters.reduce((set, [field], i) => (values[field] === undefined ? set : set | (1 << i)), 0)];
}
