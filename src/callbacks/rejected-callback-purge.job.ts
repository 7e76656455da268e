import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { ScheduledJob } from '../common/scheduled-job';
import { APP_LOGGER } from '../logging/logging.module';
import { CallbacksRepository } from './callbacks.repository';

/** REJECTED callbacks (a wrong or missing token) are kept this long, then deleted. */
export const REJECTED_CALLBACK_RETENTION_DAYS = 30;
export const REJECTED_CALLBACK_PURGE_INTERVAL_MS = 60 * 60 * 1000;
// Soon after start too: an instance restarted more often than the interval would otherwise never purge.
const FIRST_PURGE_DELAY_MS = 60 * 1000;
// Bounded transactions: a backlog is deleted in batches, each short, the loop stops at a partial batch.
const PURGE_BATCH_SIZE = 5_000;
const MAX_BATCHES_PER_RUN = 200;

/**
 * Deletes REJECTED callbacks older than 30 days, every hour. Every instance runs it; the advisory
 * lock in the repository lets one of them do the work at a time.
 */
@Injectable()
export class RejectedCallbackPurgeJob extends ScheduledJob<number> {
  constructor(
    private readonly repository: CallbacksRepository,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super(
      'rejected-callback-purge',
      REJECTED_CALLBACK_PURGE_INTERVAL_MS,
      logger.child({ component: 'rejected-callback-purge' }),
      FIRST_PURGE_DELAY_MS,
    );
  }

  /** One purge, unless one is still running in this instance; how many records it deleted. */
  async runOnce(): Promise<number> {
    return (await this.runNow()) ?? 0;
  }

  protected async work(): Promise<number> {
    let total = 0;
    try {
      for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
        const { leader, purged } = await this.repository.tryPurgeRejectedAsLeader(REJECTED_CALLBACK_RETENTION_DAYS, PURGE_BATCH_SIZE);
        total += purged;
        if (!leader || purged < PURGE_BATCH_SIZE) break;
      }
      if (total) this.log.info({ purged: total }, 'rejected callbacks purged');
    } catch (error) {
      this.log.warn({ err: error }, 'rejected callback purge failed; the next run retries');
    }
    return total;
  }
}
