import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
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
  private readonly orderExpiryMinutes: number;
  private readonly providerTimeoutMs: number;

  constructor(
    private readonly orders: OrdersRepository,
    private readonly events: OrderEventsService,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super('order-sweep', ORDER_SWEEP_INTERVAL_MS, logger);
    this.orderExpiryMinutes = config.get('orderExpiryMinutes', { infer: true });
    this.providerTimeoutMs = config.get('provider', { infer: true }).timeoutMs;
  }

  /** Runs one sweep (skipped while another instance holds it); returns how many orders moved. */
  async sweepNow(): Promise<number> {
    return (await this.runNow()) ?? 0;
  }

  protected async work(): Promise<number> {
    const events = (await this.orders.sweep(this.orderExpiryMinutes, interruptedAfterSeconds(this.providerTimeoutMs))) ?? [];
    for (const event of events) this.events.publishLocal(event);
    if (events.length) this.log.info({ moved: events.length }, 'order sweep');
    return events.length;
  }
}
