/**
 * The one way a repository reaches PostgreSQL: a statement written out in its repository, so that
 * review sees the SQL that runs, with the columns it answers declared beside it. The row type comes
 * from that declaration, never from an assertion at the call site, and
 * `test/database/statement-shapes.e2e-spec.ts` checks every declaration against the migrated schema
 * (PostgreSQL describes each statement: names, types, enum labels, NOT NULL of table columns).
 * Each is sent as a named (prepared) statement: PostgreSQL parses and plans it once per connection.
 * Every statement is registered, so that `src/queries/<repository>.sql` is generated from them and
 * checked for staleness (`npm run sql:queries`).
 */
export interface SqlStatement<Row = unknown> {
  /** Short and unique: the prepared statement's name (PostgreSQL keeps 63 bytes of a name). */
  readonly name: string;
  /** The repository file it belongs to, e.g. `orders.repository`: its SQL is listed in src/queries/<repository>.sql. */
  readonly repository: string;
  /** The repository method (or methods) that send it. */
  readonly usedBy: string;
  readonly text: string;
  /** The columns it answers, in order; empty for a statement that answers no rows. */
  readonly columns: Columns;
  /** Never set: carries the row type. */
  readonly __row?: Row;
}

/** PostgreSQL's name of a column's type (`pg_type.typname`), as pg hands its values to us. */
export type ColumnTypeName =
  'text' | 'uuid' | 'int4' | 'int8' | 'float8' | 'numeric' | 'bool' | 'timestamptz' | 'json' | 'jsonb' | 'bytea' | '_text';

/** One declared result column. `T` is what pg hands over for it. */
export class Column<T> {
  declare readonly __value: T;

  constructor(
    /** `pg_type.typname`: one of ColumnTypeName, or the name of a PostgreSQL enum. */
    readonly type: string,
    readonly nullable: boolean,
    /** For a PostgreSQL enum: its labels, in order. */
    readonly enumLabels?: readonly string[],
    /** JSON the statement builds itself (json_build_object, json_agg): its inside is not described by PostgreSQL. */
    readonly built = false,
  ) {}

  /** The same column, which may be NULL. */
  get orNull(): Column<T | null> {
    return new Column<T | null>(this.type, true, this.enumLabels, this.built);
  }

  /**
   * This column as a field of a row declaration (defineRow): the table column `source` of the
   * statement's alias, or SQL written from that alias (a cast, trim_scale, a subquery).
   */
  from(source: string | ((alias: string) => string)): RowField<T> {
    return new RowField(this, typeof source === 'string' ? (alias) => `${alias}.${source}` : source);
  }
}

/** One field of a row declaration: its column, where the statement reads it, and what the record holds of it. */
export class RowField<Stored, Value = Stored> {
  constructor(
    readonly column: Column<Stored>,
    readonly source: (alias: string) => string,
    /** Applied by the declaration's mapper to a non-NULL value; NULL stays NULL. */
    readonly convert?: (stored: NonNullable<Stored>) => Value,
  ) {}

  /** The record holds `convert(value)` (e.g. int8 text -> bigint), done once per row by the declaration's mapper. */
  as<V>(convert: (stored: NonNullable<Stored>) => V): RowField<Stored, V | Extract<Stored, null>> {
    return new RowField<Stored, V | Extract<Stored, null>>(this.column, this.source, convert);
  }
}

/** The column kinds a declaration uses. pg's own parsers decide the TypeScript side: int8 and numeric arrive as text. */
export const column = {
  text: new Column<string>('text', false),
  /** A varchar(n) column read as it is (no cast). */
  varchar: new Column<string>('varchar', false),
  uuid: new Column<string>('uuid', false),
  int4: new Column<number>('int4', false),
  int8: new Column<string>('int8', false),
  float8: new Column<number>('float8', false),
  numeric: new Column<string>('numeric', false),
  bool: new Column<boolean>('bool', false),
  timestamptz: new Column<Date>('timestamptz', false),
  textArray: new Column<string[]>('_text', false),
  bytea: new Column<Buffer>('bytea', false),
  /** Stored JSON: what it holds is the mapper's to check. */
  jsonb: new Column<unknown>('jsonb', false),
  json: new Column<unknown>('json', false),
  /** A PostgreSQL enum (not cast to text), its labels the area's value list: the check compares both. */
  enum: <const Values extends readonly string[]>(typeName: string, values: Values) => new Column<Values[number]>(typeName, false, values),
  /** JSON the statement builds with json_build_object/json_agg: typed by what the statement builds, beside it. */
  builtJson: <T>() => new Column<T>('json', false, undefined, true),
};

export type Columns = Readonly<Record<string, Column<unknown>>>;

/** The row a declaration describes. */
export type RowOf<C extends Columns> = { -readonly [K in keyof C]: C[K] extends Column<infer T> ? T : never };

/** The row of a statement. */
export type StatementRow<S> = S extends SqlStatement<infer Row> ? Row : never;

/** SQL writing a timestamptz as Date#toISOString does (timestamptz(3): milliseconds are all there is). */
export const isoTimeSql = (time: string) => `to_char(${time} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const registry = new Map<string, SqlStatement>();

/** Declares a statement of a repository; `columns` are what it answers (omit for a statement that answers no rows). */
export function sqlStatement<C extends Columns = Record<never, never>>(
  repository: string,
  usedBy: string,
  name: string,
  text: string,
  columns?: C,
): SqlStatement<RowOf<C>> {
  const existing = registry.get(name);
  const dedented = dedent(text);
  if (existing && existing.text !== dedented) throw new Error(`two SQL statements are named ${name}`);
  const statement: SqlStatement<RowOf<C>> = { name, repository, usedBy, text: dedented, columns: columns ?? {} };
  registry.set(name, statement);
  return statement;
}

/** Every statement registered by the repositories imported so far, in registration order. */
export function registeredStatements(): SqlStatement[] {
  return [...registry.values()];
}

/** The listing of one repository's statements, as committed under src/queries/. */
export function renderQueries(repository: string, statements: readonly SqlStatement[]): string {
  const own = statements.filter((s) => s.repository === repository);
  const header = `-- The written-out statements of ${repository}, generated by \`npm run sql:queries\`: do not edit.\n`;
  return header + own.map((s) => `\n-- ${s.name} (${s.usedBy})\n-- answers: ${describeColumns(s.columns)}\n${s.text};\n`).join('');
}

function describeColumns(columns: Columns): string {
  const entries = Object.entries(columns);
  if (entries.length === 0) return 'no rows';
  return entries.map(([name, c]) => `${name} ${c.type}${c.nullable ? '?' : ''}`).join(', ');
}

/** The statement's text without its indentation in the source; a line starting with a tab (a select list's continuation) is indented by four spaces. */
function dedent(text: string): string {
  const lines = text.replace(/^\n+/, '').trimEnd().split('\n');
  const own = lines.filter((l) => l.trim() !== '' && !l.startsWith('\t'));
  const indent = Math.min(...own.map((l) => l.length - l.trimStart().length));
  return lines.map((l) => (l.startsWith('\t') ? `    ${l.slice(1)}` : l.slice(indent))).join('\n');
}
