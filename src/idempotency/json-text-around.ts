/**
 * An answer's JSON text around the value of `field`, its last member, a string only the storing
 * statement knows (a time it writes): `before + JSON-escaped value + after` is JSON.stringify of the
 * answer with that value, byte for byte (see idempotencyAnswerCte).
 */
export function jsonTextAround(answer: object, field: string): { before: string; after: string } {
  const names = Object.keys(answer);
  if (names[names.length - 1] !== field) throw new Error(`${field} must be the last member of the answer`);
  const rest: Record<string, unknown> = { ...answer };
  delete rest[field];
  const head = JSON.stringify(rest).slice(0, -1);
  return { before: `${head}${names.length > 1 ? ',' : ''}${JSON.stringify(field)}:"`, after: '"}' };
}
