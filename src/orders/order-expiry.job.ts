import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { APP_LOGGER } from '../logging/logging.module';
import { OrderEventsService } from './order-events.service';
import { OrdersRepository } from './orders.repository';
import { interruptedAfterSeconds, ScheduledJob } from '../common/scheduled-job';

export const ORDER_SWEEP_INTERVAL_MS = 30_000;

/**
 * Every instance runs the sweep on a timer; the repository's advisory lock lets one of them do
 * the work each time. A late callback still decides an EXPIRED order.
 */
@Injectable()
export class OrderExpiryJob extends ScheduledJob<number> {
  constructor(
    private readonly orders: OrdersRepository,
    private readonly events: OrderEventsService,
    @InjectConfig() private readonly config: AppConfig,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super('order-sweep', ORDER_SWEEP_INTERVAL_MS, logger);
  }

  /** Runs one sweep (skipped while another instance holds it); returns how many orders moved. */
  async sweepNow(): Promise<number> {
    return (await this.runNow()) ?? 0;
  }

  protected async work(): Promise<number> {
    const events = (await this.orders.sweep(this.config.orderExpiryMinutes, interruptedAfterSeconds(this.config.provider.timeoutMs))) ?? [];
    for (const event of events) this.events.publishLocal(event);
    if (events.length) this.log.info({ moved: events.length }, 'order sweep');
    return events.length;
  }
}
