import type { PrismaService } from './prisma.service';
import { sqlStatement, type SqlStatement } from './sql-statement';

/** Tables whose rows are stored PENDING before a provider call and completed after it. */
export type InterruptibleTable = 'card_operations' | 'distributions';

export const INTERRUPTED_REASON = 'Sent to the provider, but its answer was never recorded (the service stopped)';

/** One statement per table, from one text, so the rule and its wording stay one. */
const markStatement = (table: InterruptibleTable) =>
  sqlStatement(
    'interrupted-work',
    `markInterruptedUnknown('${table}')`,
    `interrupted_${table}`,
    `
    UPDATE "${table}"
    SET status = 'UNKNOWN', completed_at = now(), failure_reason = $1
    WHERE status = 'PENDING' AND created_at < now() - make_interval(secs => $2::float8)`,
  );

const MARK_INTERRUPTED: Record<InterruptibleTable, SqlStatement> = {
  card_operations: markStatement('card_operations'),
  distributions: markStatement('distributions'),
};

/**
 * Rows still PENDING long after they were handed to the provider: the process died between the
 * call and the write. They become UNKNOWN (the provider may have acted), visibly, judged by the
 * database clock.
 */
export async function markInterruptedUnknown(prisma: PrismaService, table: InterruptibleTable, olderThanSeconds: number): Promise<number> {
  return (await prisma.runCounted(MARK_INTERRUPTED[table], [INTERRUPTED_REASON, olderThanSeconds])).count;
}
