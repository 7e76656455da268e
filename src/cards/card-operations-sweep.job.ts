import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { InterruptedWorkSweepJob } from '../common/scheduled-job';
import type { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { APP_LOGGER } from '../logging/logging.module';
import { CardsRepository } from './cards.repository';

/** Card operations interrupted by a crash (PENDING, no recorded answer) become UNKNOWN. */
@Injectable()
export class CardOperationsSweepJob extends InterruptedWorkSweepJob {
  constructor(
    private readonly cards: CardsRepository,
    @InjectConfig() config: AppConfig,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super('card-operations', config.provider.timeoutMs, logger);
  }

  protected markInterruptedUnknown(olderThanSeconds: number): Promise<number> {
    return this.cards.markInterruptedOperationsUnknown(olderThanSeconds);
  }
}
