/** True when a write was refused by a unique index (PostgreSQL 23505, or Prisma's P2002): the row already exists. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'P2002';
}
