import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { APP_LOGGER } from '../logging/logging.module';
import { OrderEventsService } from './order-events.service';
import { OrdersRepository } from './orders.repository';

export const ORDER_SWEEP_INTERVAL_MS = 30_000;

/**
 * Every instance runs the sweep on a timer; the repository's advisory lock lets one of them do
 * the work each time. A late callback still decides an EXPIRED order.
 */
@Injectable()
export class OrderExpiryScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly orders: OrdersRepository,
    private readonly events: OrderEventsService,
    @InjectConfig() private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap() {
    this.timer = setInterval(() => void this.sweepNow().catch((error: unknown) => this.logger.error({ err: error }, 'order sweep failed')), ORDER_SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown() {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Runs one sweep (skipped while another instance holds it); returns how many orders moved. */
  async sweepNow(): Promise<number> {
    if (this.running) return 0;
    // An order handed to the provider with no recorded answer after twice the timeout (plus a
    // minute) lost its answer: a crash between the call and the write.
    const stalePendingSeconds = Math.ceil((2 * this.config.provider.timeoutMs) / 1000) + 60;
    const run = this.orders.sweep(this.config.orderExpiryMinutes, stalePendingSeconds);
    this.running = run;
    try {
      const events = (await run) ?? [];
      for (const event of events) this.events.publishLocal(event);
      if (events.length) this.logger.info({ moved: events.length }, 'order sweep');
      return events.length;
    } finally {
      this.running = undefined;
    }
  }
}
