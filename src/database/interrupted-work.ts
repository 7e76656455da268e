import { Prisma } from '../generated/prisma/client';
import type { PrismaService } from './prisma.service';

/** Tables whose rows are stored PENDING before a provider call and completed after it. */
export type InterruptibleTable = 'card_operations' | 'distributions';

export const INTERRUPTED_REASON = 'Sent to the provider, but its answer was never recorded (the service stopped)';

/**
 * Rows still PENDING long after they were handed to the provider: the process died between the
 * call and the write. They become UNKNOWN (the provider may have acted), visibly, judged by the
 * database clock. One statement for every such table, so the rule and its wording stay one.
 */
export function markInterruptedUnknown(prisma: PrismaService, table: InterruptibleTable, olderThanSeconds: number): Promise<number> {
  return prisma.$executeRaw`
    UPDATE ${Prisma.raw(`"${table}"`)}
    SET status = 'UNKNOWN', completed_at = now(), failure_reason = ${INTERRUPTED_REASON}
    WHERE status = 'PENDING' AND created_at < now() - make_interval(secs => ${olderThanSeconds})`;
}
