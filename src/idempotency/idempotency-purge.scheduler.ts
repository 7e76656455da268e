import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_LOGGER } from '../logging/logging.module';
import { IdempotencyRepository } from './idempotency.repository';

export const IDEMPOTENCY_PURGE_INTERVAL_MS = 10 * 60 * 1000;
// Soon after start too: an instance restarted more often than the interval would otherwise never purge.
const FIRST_PURGE_DELAY_MS = 30 * 1000;

/**
 * Deletes expired idempotency records every ten minutes. Every instance runs it; the advisory
 * lock in the repository lets one of them do the work at a time.
 */
@Injectable()
export class IdempotencyPurgeScheduler implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  private readonly logger: Logger;
  private timers: NodeJS.Timeout[] = [];
  private running: Promise<void> | undefined;

  constructor(
    private readonly repository: IdempotencyRepository,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'idempotency-purge' });
  }

  onApplicationBootstrap() {
    // unref: a pending purge never keeps the process (or a test run) alive.
    this.timers = [setTimeout(() => void this.runOnce(), FIRST_PURGE_DELAY_MS).unref(), setInterval(() => void this.runOnce(), IDEMPOTENCY_PURGE_INTERVAL_MS).unref()];
  }

  /** One purge, unless one is still running in this instance. */
  async runOnce(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.purge().finally(() => (this.running = undefined));
    return this.running;
  }

  // Before the database module disconnects, so that a purge in flight can finish.
  async onModuleDestroy() {
    this.stop();
    await this.running;
  }

  onApplicationShutdown() {
    this.stop();
  }

  private stop() {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
  }

  private async purge(): Promise<void> {
    try {
      const { leader, purged } = await this.repository.tryPurgeAsLeader();
      if (leader) this.logger.debug({ purged }, 'expired idempotency records purged');
    } catch (error) {
      this.logger.warn({ err: error }, 'idempotency purge failed; the next run retries');
    }
  }
}
