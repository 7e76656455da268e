import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import { InterruptedWorkSweepJob } from '../common/scheduled-job';
import type { AppConfig } from '../config/app-config';
import { Database } from '../database/database';
import { APP_LOGGER } from '../logging/logging.module';
import { INTERRUPTED_REASON, registeredOperationTables } from './operation-tables';

/**
 * Operations of every registered type (registerOperationTable) that does not sweep itself, still PENDING long after they were
 * handed to the provider: the process died between the call and the write. They become UNKNOWN
 * (the provider may have acted), visibly, judged by the database clock: one statement per table.
 */
@Injectable()
export class InterruptedOperationsSweepJob extends InterruptedWorkSweepJob {
  constructor(
    private readonly database: Database,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super('provider-operations', config.get('provider', { infer: true }).timeoutMs, logger);
  }

  protected async markInterruptedUnknown(olderThanSeconds: number): Promise<number> {
    let moved = 0;
    for (const { markInterrupted } of registeredOperationTables()) {
      // A table that sweeps itself (pay-in orders: OrderExpiryJob) has no such statement here.
      if (markInterrupted) moved += (await this.database.runCounted(markInterrupted, [INTERRUPTED_REASON, olderThanSeconds])).count;
    }
    return moved;
  }
}
