import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { ScheduledJob } from '../common/scheduled-job';
import { APP_LOGGER } from '../logging/logging.module';
import { AgentBudgetRepository } from './agent-budget.repository';

const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * Deletes the agent budget's buckets that have left the rolling hour. Every instance runs it: the
 * DELETE is idempotent and never touches a bucket still counted, so no lock is needed.
 */
@Injectable()
export class AgentBudgetSweepJob extends ScheduledJob<number> {
  constructor(
    private readonly repository: AgentBudgetRepository,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super('agent-budget-sweep', SWEEP_INTERVAL_MS, logger);
  }

  protected work(): Promise<number> {
    return this.repository.sweep();
  }
}
