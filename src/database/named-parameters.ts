import { Column } from './sql-statement';

/**
 * The named parameters of a statement that takes more than a handful (ADR 0007): declared once as
 * `{ ownerId: column.text, email: column.text, … }`, each becomes its placeholder `$n::type`, in
 * declared order from `first`, to write into the statement (`${p.ownerId}`, as often as it is
 * used); `parameterValues(p, { ownerId, email, … })` makes the values array in the same order, so
 * that a call site passes an object and a new parameter is one line here and one in the SQL.
 */
export type NamedParameters<D extends ParameterDeclaration> = { readonly [K in keyof D]: string } & {
  readonly [declared]: readonly (keyof D & string)[];
};

export type ParameterDeclaration = Readonly<Record<string, Column<unknown>>>;

/** What each parameter takes: its column's value type. */
export type ParameterValues<D extends ParameterDeclaration> = { readonly [K in keyof D]: D[K] extends Column<infer T> ? T : never };

const declared = Symbol('declared parameters');

/** The placeholders of `declaration`, numbered from `first` (after the positional ones a shared fragment takes). */
export function namedParameters<D extends ParameterDeclaration>(declaration: D, first = 1): NamedParameters<D> {
  const names = Object.keys(declaration);
  const placeholders = Object.fromEntries(names.map((name, i) => [name, `$${first + i}::${castOf(declaration[name])}`]));
  return Object.assign(placeholders, { [declared]: names }) as NamedParameters<D>;
}

/** The values of named parameters, in their declared order; a parameter absent from `values` is sent as NULL. */
export function parameterValues<D extends ParameterDeclaration>(parameters: NamedParameters<D>, values: ParameterValues<D>): unknown[] {
  const names = parameters[declared];
  const source = values as Record<string, unknown>;
  const list = new Array<unknown>(names.length);
  for (let i = 0; i < names.length; i++) list[i] = source[names[i]] ?? null;
  return list;
}

/** `$n` of a placeholder, for a shared fragment that casts its parameters itself. */
export function uncast(placeholder: string): string {
  return placeholder.slice(0, placeholder.indexOf('::'));
}

/** An array parameter of `element`'s type (e.g. `int4[]`), for unnest. */
export function arrayOf<T>(element: Column<T>): Column<T[]> {
  return new Column<T[]>(`_${element.type}`, false);
}

/** How a parameter is cast: an enum by its quoted name, an array type (`_text`) as `text[]`. */
function castOf(parameter: Column<unknown>): string {
  if (parameter.enumLabels) return `"${parameter.type}"`;
  if (parameter.type.startsWith('_')) return `${parameter.type.slice(1)}[]`;
  return parameter.type;
}
