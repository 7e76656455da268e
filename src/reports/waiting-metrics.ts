import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { interruptedAfterSeconds } from '../common/scheduled-job';
import type { AppConfig } from '../config/app-config';
import { MetricsService } from '../metrics/metrics.service';
import { attentionQueueLabels, AttentionRepository, type WaitingRow } from './reports.repository';

/** How often an instance counts the waiting work again once scraped (counted in the database, for all instances). */
export const WAITING_METRICS_REFRESH_MS = 30_000;

/**
 * What waits, for alerts: each attention queue's size and its oldest item's age, and how long the
 * oldest PROCESSING order has waited for the provider's callback. One statement, read in the
 * background every 30 s once the instance is scraped (gaugeRefreshedEvery), never per scrape; every
 * queue has a value, 0 when it is empty. The values are the database's, the same on every instance.
 */
@Injectable()
export class WaitingMetrics implements OnModuleInit {
  private readonly stalePendingSeconds: number;
  private reading?: Promise<WaitingRow[]>;

  constructor(
    private readonly attention: AttentionRepository,
    private readonly metrics: MetricsService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.stalePendingSeconds = interruptedAfterSeconds(config.get('provider', { infer: true }).timeoutMs);
  }

  onModuleInit() {
    // The queues of the attention report (GET /v1/reports/attention), as the `queue` label names them: every registered table's.
    const queues = attentionQueueLabels();
    const read = (value: (row: WaitingRow | undefined) => number) => async () => {
      const rows = await this.waiting();
      return queues.map((queue) => ({ labels: { queue }, value: value(rows.find((row) => row.queue === queue)) }));
    };
    this.metrics.gaugeRefreshedEvery(
      'attention_queue_items',
      'Items waiting for a person, by queue of the attention report (all instances: counted in the database every 30 s)',
      ['queue'],
      WAITING_METRICS_REFRESH_MS,
      read((row) => row?.items ?? 0),
    );
    this.metrics.gaugeRefreshedEvery(
      'attention_queue_oldest_age_seconds',
      'Age of the oldest item of each attention queue, since its creation; 0 when the queue is empty (all instances, every 30 s)',
      ['queue'],
      WAITING_METRICS_REFRESH_MS,
      read((row) => row?.oldestAgeSeconds ?? 0),
    );
    this.metrics.gaugeRefreshedEvery(
      'orders_awaiting_callback_oldest_seconds',
      "How long the oldest PROCESSING order has waited for the provider's callback since it was handed over; 0 when none waits (all instances, every 30 s)",
      [],
      WAITING_METRICS_REFRESH_MS,
      async () => {
        const rows = await this.waiting();
        return [{ labels: {}, value: rows.find((row) => row.queue === 'orders_awaiting_callback')?.oldestAgeSeconds ?? 0 }];
      },
    );
  }

  /** The three gauges refresh together: one statement in flight serves them all. */
  private waiting(): Promise<WaitingRow[]> {
    return (this.reading ??= this.attention.waiting(this.stalePendingSeconds).finally(() => (this.reading = undefined)));
  }
}
