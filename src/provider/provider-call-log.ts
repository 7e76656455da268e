import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { Database } from '../database/database';
import { APP_LOGGER } from '../logging/logging.module';
import { outsideScopes } from '../common/async-scope';
import { ProviderCallRepository, storableCall, type ProviderCallRecord, type StorableCall } from './provider-call.repository';

/** How long a queued call waits for others to share its INSERT (a full batch is written at once). */
export const CALL_LOG_FLUSH_DELAY_MS = 200;
const MAX_BATCH = 500;

/**
 * The provider call log, written off the request path: a call is queued, and the queue is written
 * in batches (one INSERT each, one at a time) a few milliseconds later. A clean shutdown writes
 * what is queued before the database disconnects, after the requests in flight have finished; only
 * a crash can lose the last few milliseconds of the log (never a payment: the order and its
 * history are written by the request itself).
 */
@Injectable()
export class ProviderCallLog {
  private queued: StorableCall[] = [];
  private writing: Promise<void> = Promise.resolve();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly repository: ProviderCallRepository,
    @Inject(APP_LOGGER) private readonly logger: Logger,
    database: Database,
  ) {
    database.beforeDisconnect(() => this.flush());
  }

  record(call: ProviderCallRecord): void {
    try {
      this.queued.push(storableCall(call, new Date()));
    } catch (error) {
      // One unstorable call must not cost the batch its other rows, nor its caller an error.
      this.logger.error({ err: error, endpoint: call.endpoint }, 'could not record provider call');
      return;
    }
    if (this.queued.length >= MAX_BATCH) void this.flush();
    // Outside the request's context: the write is not the request's work (nor logged or counted as such).
    else this.timer ??= outsideScopes(() => setTimeout(() => void this.flush(), CALL_LOG_FLUSH_DELAY_MS));
  }

  /** Writes everything queued so far; resolves once it is stored (or its failure logged). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queued.splice(0);
    if (batch.length) this.writing = this.writing.then(() => this.write(batch));
    return this.writing;
  }

  private async write(batch: StorableCall[]): Promise<void> {
    try {
      await this.repository.recordMany(batch);
    } catch (error) {
      // The calls themselves are what matters to their callers; a lost log row must not turn a payment into an error.
      this.logger.error(
        { err: error, calls: batch.length, endpoints: [...new Set(batch.map((c) => c.endpoint))] },
        'could not record provider calls',
      );
    }
  }
}
