import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';

/**
 * A job every instance runs on a timer from bootstrap to shutdown: unref'd (it never keeps the
 * process alive), never overlapping itself. Jobs that must run on one instance at a time take a
 * transaction-scoped advisory lock inside `work`.
 */
export abstract class ScheduledJob<T> implements OnApplicationBootstrap, OnModuleDestroy {
  private timers: NodeJS.Timeout[] = [];
  private running?: Promise<T>;

  /** `firstRunAfterMs`: an extra first run soon after start, for jobs whose interval is long. */
  protected constructor(
    protected readonly jobName: string,
    private readonly intervalMs: number,
    protected readonly log: Logger,
    private readonly firstRunAfterMs?: number,
  ) {}

  protected abstract work(): Promise<T>;

  onApplicationBootstrap() {
    const tick = () =>
      void this.runNow().catch((error: unknown) => this.log.error({ err: error, job: this.jobName }, 'scheduled job failed'));
    this.timers = [setInterval(tick, this.intervalMs).unref()];
    if (this.firstRunAfterMs !== undefined) this.timers.push(setTimeout(tick, this.firstRunAfterMs).unref());
  }

  // At module destruction, when the database is still connected: a run in flight can finish.
  async onModuleDestroy() {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
    await this.running?.catch(() => undefined);
  }

  /** Runs once now; while a run is in progress, returns `undefined` instead of starting another. */
  async runNow(): Promise<T | undefined> {
    if (this.running) return undefined;
    this.running = this.work();
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
export abstract class InterruptedWorkSweepJob extends ScheduledJob<number> {
  protected constructor(
    what: string,
    private readonly providerTimeoutMs: number,
    log: Logger,
  ) {
    super(`${what}-sweep`, INTERRUPTED_WORK_SWEEP_INTERVAL_MS, log);
  }

  /** Marks PENDING rows older than `olderThanSeconds` UNKNOWN; returns how many. */
  protected abstract markInterruptedUnknown(olderThanSeconds: number): Promise<number>;

  async sweepNow(): Promise<number> {
    return (await this.runNow()) ?? 0;
  }

  protected async work(): Promise<number> {
    const moved = await this.markInterruptedUnknown(interruptedAfterSeconds(this.providerTimeoutMs));
    if (moved) this.log.warn({ moved, job: this.jobName }, 'interrupted work marked UNKNOWN');
    return moved;
  }
}
