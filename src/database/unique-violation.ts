/** True when a write was refused by a unique index (Prisma P2002): the row already exists. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'P2002';
}
