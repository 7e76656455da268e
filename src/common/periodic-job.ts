import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';

/**
 * A job every instance runs on a timer (unref'd: it never keeps the process alive), never
 * overlapping itself, stopped on shutdown. Jobs that must run on one instance at a time take a
 * transaction-scoped advisory lock inside `run`.
 */
export class PeriodicJob<T> {
  private timer?: NodeJS.Timeout;
  private running?: Promise<T>;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly run: () => Promise<T>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.runNow().catch((error: unknown) => this.logger.error({ err: error, job: this.name }, 'periodic job failed')), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Runs once now; while a run is in progress, returns `undefined` instead of starting another. */
  async runNow(): Promise<T | undefined> {
    if (this.running) return undefined;
    this.running = this.run();
    try {
      return await this.running;
    } finally {
      this.running = undefined;
    }
  }
}

/**
 * How long a request handed to the provider may stay without a recorded answer before it is
 * declared UNKNOWN: twice the provider timeout (a 401 retry) plus a minute. Past that, the process
 * that sent it died between the call and the write.
 */
export function interruptedAfterSeconds(providerTimeoutMs: number): number {
  return Math.ceil((2 * providerTimeoutMs) / 1000) + 60;
}

export const INTERRUPTED_WORK_SWEEP_INTERVAL_MS = 60_000;

/**
 * Work stored PENDING before a provider call and completed after it: if the process dies in
 * between, the row stays PENDING. Each area's sweeper turns such rows UNKNOWN (the provider may
 * have acted) once `interruptedAfterSeconds` have passed, so nothing stays silently in limbo.
 */
export abstract class InterruptedWorkSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly job: PeriodicJob<number>;

  protected constructor(
    private readonly what: string,
    private readonly providerTimeoutMs: number,
    private readonly log: Logger,
  ) {
    this.job = new PeriodicJob(`${what}-sweep`, INTERRUPTED_WORK_SWEEP_INTERVAL_MS, () => this.sweep(), log);
  }

  /** Marks PENDING rows older than `olderThanSeconds` UNKNOWN; returns how many. */
  protected abstract markInterruptedUnknown(olderThanSeconds: number): Promise<number>;

  onApplicationBootstrap() {
    this.job.start();
  }

  async onApplicationShutdown() {
    await this.job.stop();
  }

  async sweepNow(): Promise<number> {
    return (await this.job.runNow()) ?? 0;
  }

  private async sweep(): Promise<number> {
    const moved = await this.markInterruptedUnknown(interruptedAfterSeconds(this.providerTimeoutMs));
    if (moved) this.log.warn({ moved, what: this.what }, 'interrupted work marked UNKNOWN');
    return moved;
  }
}
