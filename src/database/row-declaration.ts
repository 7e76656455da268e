import type { Column, RowField, RowOf } from './sql-statement';

/**
 * One declaration per row of a table (ADR 0007): each field's column kind, where the statements
 * read it, and what the record holds of it. From it come the select list (snake_case sources,
 * camelCase aliases, written once here), the `Columns` the statements declare (checked against the
 * schema by statement-shapes) and the mapper, built once per declaration, not per row.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a field of any stored and record type
export type RowFields = Readonly<Record<string, RowField<any, any>>>;

/** The columns a statement selecting the declaration answers. */
export type FieldColumns<F extends RowFields> = { readonly [K in keyof F]: F[K] extends RowField<infer S, unknown> ? Column<S> : never };

/** The record a row is read into: each field's value after its conversion. */
export type RecordOf<F extends RowFields> = { -readonly [K in keyof F]: F[K] extends RowField<never, infer V> ? V : never };

/** The same columns named `${prefix}.${name}`, for a row beside another in one statement. */
export type PartColumns<F extends RowFields, P extends string> = {
  readonly [K in keyof F as `${P}.${K & string}`]: F[K] extends RowField<infer S, unknown> ? Column<S> : never;
};

export interface RowPart<F extends RowFields, P extends string> {
  readonly columns: PartColumns<F, P>;
  /** The select list from alias `alias`, each column named `${prefix}.${field}`. */
  readonly select: (alias: string) => string;
  /** The record of this part of a row: copied out of its prefixed columns, converted. */
  readonly read: (row: RowOf<PartColumns<F, P>>) => RecordOf<F>;
}

export interface RowDeclaration<F extends RowFields> {
  readonly fields: F;
  readonly columns: FieldColumns<F>;
  /** The select list from alias `alias`: `a.id, a.owner_id AS "ownerId", trim_scale(a.amount)::text AS amount, …`. */
  readonly select: (alias: string) => string;
  /**
   * The record of a row of a statement answering exactly `columns`: the row itself when no field
   * converts (pg already named its columns as the record's fields), else a converted copy.
   */
  readonly read: (row: RowOf<FieldColumns<F>>) => RecordOf<F>;
  /** The record of a row carrying more columns than the declaration's (a statement answering more beside it): a copy of its fields. */
  readonly pick: (row: RowOf<FieldColumns<F>>) => RecordOf<F>;
  /** The same declaration beside another in one statement, its columns prefixed. */
  readonly part: <P extends string>(prefix: P) => RowPart<F, P>;
}

export function defineRow<F extends RowFields>(fields: F): RowDeclaration<F> {
  const names = Object.keys(fields);
  const columns = Object.fromEntries(names.map((name) => [name, fields[name].column])) as FieldColumns<F>;
  const converts = names.some((name) => fields[name].convert !== undefined);
  return {
    fields,
    columns,
    select: (alias) => selectList(fields, alias, ''),
    read: converts ? copier(fields, '') : (row) => row as RecordOf<F>,
    pick: copier(fields, ''),
    part: <P extends string>(prefix: P): RowPart<F, P> => ({
      columns: Object.fromEntries(names.map((name) => [`${prefix}.${name}`, fields[name].column])) as PartColumns<F, P>,
      select: (alias) => selectList(fields, alias, `${prefix}.`),
      read: copier(fields, `${prefix}.`),
    }),
  };
}

/** A column cast to text (a char(n), a date, a uuid read as text). */
export const asText = (name: string) => (alias: string) => `${alias}.${name}::text`;

/** A numeric amount as text without the trailing zeros of numeric(24,4) (as Prisma's Decimal gave it). */
export const trimmedAmount = (name: string) => (alias: string) => `trim_scale(${alias}.${name})::text`;

/** The fields `names` of a declaration, as the fields of another (a statement answering part of a row). */
export function pickFields<F extends RowFields, const K extends keyof F>(fields: F, names: readonly K[]): Pick<F, K> {
  return Object.fromEntries(names.map((name) => [name, fields[name]])) as Pick<F, K>;
}

/** The select list, wrapped so that the listings under src/queries stay readable. */
function selectList(fields: RowFields, alias: string, prefix: string): string {
  const items = Object.entries(fields).map(([name, field]) => {
    const source = field.source(alias);
    const label = prefix + name;
    if (source === `${alias}.${label}`) return source;
    return `${source} AS ${/^[a-z_][a-z0-9_]*$/.test(label) ? label : `"${label}"`}`;
  });
  const lines: string[] = [];
  for (const item of items) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last].length + item.length < 110) lines[last] += `, ${item}`;
    else lines.push(item);
  }
  // A tab starts a continuation line: sqlStatement indents it by four spaces, whatever the statement's own indentation.
  return lines.join(',\n\t');
}

/**
 * A mapper copying the declared fields out of a row (read from `prefix + name`), converting those
 * that convert, generated once per declaration as one object literal: as fast as a hand-written
 * mapper (scripts/bench-row-mappers.ts), where a loop over the key list was ten times slower (each record
 * built property by property). The names come from the declarations in src/, never from input.
 */
function copier<F extends RowFields>(fields: F, prefix: string): (row: object) => RecordOf<F> {
  const names = Object.keys(fields);
  const converts = names.map((name) => fields[name].convert as ((value: unknown) => unknown) | undefined);
  const properties = names.map((name, i) => {
    const value = `row[${JSON.stringify(prefix + name)}]`;
    return `${JSON.stringify(name)}: ${converts[i] ? `${value} === null ? null : convert${i}(${value})` : value}`;
  });
  const parameters = names.map((_, i) => `convert${i}`);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated once per declaration from its field names (see above)
  const build = new Function(...parameters, `return (row) => ({ ${properties.join(', ')} });`) as (
    ...converts: unknown[]
  ) => (row: object) => RecordOf<F>;
  return build(...converts);
}
