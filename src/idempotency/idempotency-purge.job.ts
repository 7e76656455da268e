import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { ScheduledJob } from '../common/scheduled-job';
import { APP_LOGGER } from '../logging/logging.module';
import { IdempotencyRepository } from './idempotency.repository';

export const IDEMPOTENCY_PURGE_INTERVAL_MS = 10 * 60 * 1000;
// Soon after start too: an instance restarted more often than the interval would otherwise never purge.
const FIRST_PURGE_DELAY_MS = 30 * 1000;

/**
 * Deletes expired idempotency records every ten minutes. Every instance runs it; the advisory
 * lock in the repository lets one of them do the work at a time.
 */
@Injectable()
export class IdempotencyPurgeJob extends ScheduledJob<void> {
  constructor(
    private readonly repository: IdempotencyRepository,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super('idempotency-purge', IDEMPOTENCY_PURGE_INTERVAL_MS, logger.child({ component: 'idempotency-purge' }), FIRST_PURGE_DELAY_MS);
  }

  /** One purge, unless one is still running in this instance. */
  async runOnce(): Promise<void> {
    await this.runNow();
  }

  protected async work(): Promise<void> {
    try {
      const { leader, purged } = await this.repository.tryPurgeAsLeader();
      if (leader) this.log.debug({ purged }, 'expired idempotency records purged');
    } catch (error) {
      this.log.warn({ err: error }, 'idempotency purge failed; the next run retries');
    }
  }
}
