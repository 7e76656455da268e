import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import { InterruptedWorkSweepJob } from '../common/scheduled-job';
import type { AppConfig } from '../config/app-config';
import { APP_LOGGER } from '../logging/logging.module';
import { DistributionsRepository } from './distributions.repository';

/** Distributions interrupted by a crash (PENDING, no recorded answer) become UNKNOWN. */
@Injectable()
export class DistributionsSweepJob extends InterruptedWorkSweepJob {
  constructor(
    private readonly distributions: DistributionsRepository,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super('distributions', config.get('provider', { infer: true }).timeoutMs, logger);
  }

  protected markInterruptedUnknown(olderThanSeconds: number): Promise<number> {
    return this.distributions.markInterruptedUnknown(olderThanSeconds);
  }
}
