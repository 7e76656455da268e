import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import { InterruptedWorkSweepJob } from '../common/scheduled-job';
import type { AppConfig } from '../config/app-config';
import { APP_LOGGER } from '../logging/logging.module';
import { CardsRepository } from './cards.repository';

/** Card operations interrupted by a crash (PENDING, no recorded answer) become UNKNOWN. */
@Injectable()
export class CardOperationsSweepJob extends InterruptedWorkSweepJob {
  constructor(
    private readonly cards: CardsRepository,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super('card-operations', config.get('provider', { infer: true }).timeoutMs, logger);
  }

  protected markInterruptedUnknown(olderThanSeconds: number): Promise<number> {
    return this.cards.markInterruptedOperationsUnknown(olderThanSeconds);
  }
}
