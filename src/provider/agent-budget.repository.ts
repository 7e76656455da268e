import { TRANSACTION_LIMITS } from '../database/transaction-limits';
import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import { ADVISORY_LOCKS } from '../database/advisory-locks';

export type BudgetDecision = { granted: true } | { granted: false; retryAfterSeconds: number };

@Injectable()
export class AgentBudgetRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Takes one slot of the rolling-hour budget if one is free. The advisory lock makes the
   * count-then-insert atomic across every instance sharing the database; the database clock is
   * the only clock used.
   */
  async take(endpoint: string, hourlyLimit: number): Promise<BudgetDecision> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.agentBudget})`;
      await tx.$executeRaw`DELETE FROM agent_budget_slots WHERE taken_at <= now() - interval '1 hour'`;
      const [usage] = await tx.$queryRaw<{ used: number; retryAfterMs: number | null }[]>`
        WITH window_slots AS (
          SELECT taken_at FROM agent_budget_slots ORDER BY taken_at DESC LIMIT ${hourlyLimit}
        )
        SELECT count(*)::int AS used,
               (EXTRACT(EPOCH FROM (min(taken_at) + interval '1 hour' - now())) * 1000)::float8 AS "retryAfterMs"
        FROM window_slots`;
      if (usage.used >= hourlyLimit) {
        return { granted: false, retryAfterSeconds: Math.max(1, Math.ceil((usage.retryAfterMs ?? 1000) / 1000)) };
      }
      await tx.$executeRaw`INSERT INTO agent_budget_slots (endpoint) VALUES (${endpoint})`;
      return { granted: true };
    }, TRANSACTION_LIMITS);
  }

  async usedInLastHour(): Promise<number> {
    const [row] = await this.prisma.$queryRaw<{ used: number }[]>`
      SELECT count(*)::int AS used FROM agent_budget_slots WHERE taken_at > now() - interval '1 hour'`;
    return row.used;
  }
}
