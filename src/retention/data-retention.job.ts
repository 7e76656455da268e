import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import { ScheduledJob } from '../common/scheduled-job';
import type { AppConfig } from '../config/app-config';
import type { RetentionSettings } from '../config/retention-settings';
import { APP_LOGGER } from '../logging/logging.module';
import { RetentionRepository, type PrunedKind } from './retention.repository';
import { noPruneCounts, type OperationalTable, type PruneCounts } from './retention-tables';

export const DATA_RETENTION_INTERVAL_MS = 60 * 60 * 1000;
// Soon after start too: an instance restarted more often than the interval would otherwise never prune.
const FIRST_RUN_DELAY_MS = 2 * 60 * 1000;
/** Small batches: each a short transaction holding a few thousand row locks at most. */
export const PRUNE_BATCH_SIZE = 1_000;
/** A pass stops there; the next one goes on (a year's backlog takes a few passes, never one long run). */
const MAX_BATCHES_PER_KIND = 500;

export interface PrunePass {
  /** False when another instance held the retention lock: it is pruning, this pass deleted nothing. */
  leader: boolean;
  deleted: PruneCounts;
}

/**
 * One pass deletes what is older than the retention settings, in batches. Every instance runs it
 * every hour; the advisory lock taken by each batch lets one instance work at a time.
 */
export async function prunePass(
  repository: RetentionRepository,
  retention: RetentionSettings,
  batchSize = PRUNE_BATCH_SIZE,
): Promise<PrunePass> {
  const deleted = noPruneCounts();
  const kinds: [PrunedKind, number][] = [
    ['provider_calls', retention.providerCallsDays],
    ['events', retention.webhookDays],
  ];
  for (const [kind, days] of kinds) {
    for (let batch = 0; batch < MAX_BATCHES_PER_KIND; batch++) {
      const result = await repository.pruneBatchAsLeader(kind, days, batchSize);
      if (!result.leader) return { leader: false, deleted };
      for (const [table, count] of Object.entries(result.deleted) as [OperationalTable, number][]) deleted[table] += count;
      if (!result.full) break;
    }
  }
  return { leader: true, deleted };
}

@Injectable()
export class DataRetentionJob extends ScheduledJob<PrunePass | undefined> {
  private readonly retention: RetentionSettings;

  constructor(
    private readonly repository: RetentionRepository,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super('data-retention', DATA_RETENTION_INTERVAL_MS, logger.child({ component: 'data-retention' }), FIRST_RUN_DELAY_MS);
    this.retention = config.get('retention', { infer: true });
  }

  protected async work(): Promise<PrunePass | undefined> {
    try {
      const pass = await prunePass(this.repository, this.retention);
      if (Object.values(pass.deleted).some((count) => count > 0))
        this.log.info({ deleted: pass.deleted }, 'expired operational records deleted');
      return pass;
    } catch (error) {
      this.log.warn({ err: error }, 'data retention pass failed; the next run retries');
      return undefined;
    }
  }
}
