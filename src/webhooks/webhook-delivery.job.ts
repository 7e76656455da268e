import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import { ScheduledJob } from '../common/scheduled-job';
import type { AppConfig } from '../config/app-config';
import { WEBHOOK_MAX_IN_FLIGHT } from '../config/webhook-settings';
import { APP_LOGGER } from '../logging/logging.module';
import { MetricsService } from '../metrics/metrics.service';
import { renderEventBody } from './event-body';
import { WebhookEndpointsService } from './webhook-endpoints.service';
import { WebhookSender, type WebhookAttemptResult } from './webhook-sender';
import { WebhookSecretUnreadable } from './webhook-secret-unreadable';
import { webhookSignatureHeader } from './webhook-signature';
import { WebhookDeliveriesRepository, type ClaimedDelivery, type RecordedAttempt } from './webhook-deliveries.repository';

/** How often an idle instance looks for due deliveries: the first attempt comes within 2 s of the commit. */
export const WEBHOOK_POLL_INTERVAL_MS = 250;
/** Attempts in flight at once on one instance, all endpoints together (of which one endpoint may have WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT). */
export { WEBHOOK_MAX_IN_FLIGHT };
/** A claim lasts this long (longer when the timeout needs it): a dead instance's deliveries are attempted again after it. */
export const WEBHOOK_CLAIM_SECONDS = 30;
/** Up to 10 % is added to each retry delay, so that endpoints failing together are not retried together. */
export const WEBHOOK_RETRY_JITTER = 0.1;
/** A `Retry-After` longer than this is not waited for longer. */
export const WEBHOOK_MAX_RETRY_AFTER_SECONDS = 24 * 3600;
/** On shutdown, attempts in flight get this long to finish and be recorded; the claims of the rest are released. */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * The delivery worker, on every instance: every 250 ms (and at once whenever an attempt finishes
 * and frees a slot) it claims the due deliveries it has room for (`FOR UPDATE SKIP LOCKED`, a 30 s
 * claim: docs/adr/0008-webhook-delivery-queue.md), sends them concurrently (at most 32 in flight,
 * at most WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT of them to one endpoint, turn by turn across endpoints),
 * and records the finished attempts in batches (one statement each). A failed attempt is retried
 * after the next delay of WEBHOOK_RETRY_SCHEDULE plus up to 10 % jitter, or the `Retry-After` of a
 * 429 or 503 when longer; after the last, the delivery is FAILED. A 410 disables the endpoint.
 */
@Injectable()
export class WebhookDeliveryJob extends ScheduledJob<number> {
  /** This process, in `claimed_by`: host, pid and a random tag; each claim adds its number. */
  readonly instance = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly sender: WebhookSender;
  private readonly schedule: number[];
  private readonly currencies: AppConfig['currencies'];
  private readonly leaseSeconds: number;
  private readonly perEndpoint: number;
  private readonly inFlight = new Map<string, ClaimedDelivery>();
  private finished: RecordedAttempt[] = [];
  private flushing?: Promise<void>;
  private claims = 0;
  /** Attempts this instance has started since it began (for tests and logs). */
  attemptsStarted = 0;
  private stopping = false;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly endpoints: WebhookEndpointsService,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) logger: Logger,
    private readonly metrics: MetricsService,
  ) {
    super('webhook-delivery', WEBHOOK_POLL_INTERVAL_MS, logger.child({ component: 'webhook-delivery' }));
    const webhooks = config.get('webhooks', { infer: true });
    this.sender = new WebhookSender(
      { allowInsecureUrls: webhooks.allowInsecureUrls, allowPrivateUrls: webhooks.allowPrivateUrls },
      webhooks.timeoutMs,
    );
    this.schedule = webhooks.retrySchedule;
    this.perEndpoint = webhooks.maxInFlightPerEndpoint;
    this.leaseSeconds = Math.max(WEBHOOK_CLAIM_SECONDS, Math.ceil(webhooks.timeoutMs / 1000) + 10);
    this.currencies = config.get('currencies', { infer: true });
  }

  /** Attempts in flight on this instance now. */
  get attemptsInFlight(): number {
    return this.inFlight.size;
  }

  /** Claims and starts what there is room for; answers how many attempts it started. */
  protected async work(): Promise<number> {
    let started = 0;
    while (!this.stopping) {
      const room = WEBHOOK_MAX_IN_FLIGHT - this.inFlight.size;
      if (room <= 0) break;
      const claim = `${this.instance}:${(++this.claims).toString(36)}`;
      const claimed = await this.deliveries.claim(claim, room, this.leaseSeconds, this.perEndpoint, this.inFlightPerEndpoint());
      for (const delivery of claimed) this.start(delivery);
      started += claimed.length;
      if (claimed.length < room) break;
    }
    return started;
  }

  /** This instance's attempts in flight, per endpoint id: what the claim counts against each endpoint's allowance. */
  private inFlightPerEndpoint(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { endpointId } of this.inFlight.values()) counts.set(endpointId, (counts.get(endpointId) ?? 0) + 1);
    return counts;
  }

  /** Waits until nothing is in flight and every result is recorded (tests, shutdown). */
  async settle(timeoutMs = 30_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight.size > 0 || this.finished.length > 0 || this.flushing) {
      if (Date.now() > deadline) return false;
      await (this.flushing ?? new Promise((done) => setTimeout(done, 10)));
    }
    return true;
  }

  override async onModuleDestroy() {
    this.stopping = true;
    await super.onModuleDestroy();
    if (!(await this.settle(SHUTDOWN_GRACE_MS))) {
      // Not finished in time: their claims are released so that another instance attempts them now
      // (an answer that still arrives may make that a second attempt: delivery is at least once).
      const left = [...this.inFlight.values()];
      this.inFlight.clear();
      await this.deliveries
        .release(
          left.map((d) => d.id),
          left.map((d) => d.claimedBy ?? ''),
        )
        .catch((error: unknown) => this.log.warn({ err: error }, 'webhook claims not released; they lapse'));
    }
    this.sender.close();
  }

  private start(delivery: ClaimedDelivery): void {
    this.inFlight.set(delivery.id, delivery);
    this.attemptsStarted++;
    void this.attempt(delivery)
      .catch((error: unknown): WebhookAttemptResult => ({
        delivered: false,
        durationMs: 0,
        error: String(error),
        gone: false,
        at: new Date(),
      }))
      .then((result) => {
        if (!this.inFlight.delete(delivery.id)) return; // released at shutdown
        const recorded = this.recorded(delivery, result);
        this.metrics.webhookAttempts.inc({ outcome: recorded.outcome });
        this.finished.push(recorded);
        this.flush();
      });
  }

  private async attempt(delivery: ClaimedDelivery): Promise<WebhookAttemptResult> {
    let secrets: string[];
    try {
      secrets = this.endpoints.signingSecrets(
        { id: delivery.endpointId, secretEncrypted: delivery.secretEncrypted, previousSecretEncrypted: delivery.previousSecretEncrypted },
        (which) => this.metrics.webhookSecretsUnreadable.inc({ secret: which }),
      );
    } catch (error) {
      if (!(error instanceof WebhookSecretUnreadable)) throw error;
      this.log.error(
        { webhookEndpointId: delivery.endpointId, eventId: delivery.eventId, reason: error.message },
        'webhook signing secret cannot be opened: attempt not sent',
      );
      return { delivered: false, durationMs: 0, error: error.message, gone: false, at: new Date() };
    }
    const body = renderEventBody(
      {
        id: delivery.eventId,
        type: delivery.eventType,
        resourceType: delivery.resourceType,
        previousStatus: delivery.previousStatus,
        snapshot: delivery.snapshot,
        createdAt: delivery.eventCreatedAt,
      },
      this.currencies,
    );
    return this.sender.send({
      url: delivery.url,
      eventId: delivery.eventId,
      body,
      signatureHeader: (timestamp) => webhookSignatureHeader(secrets, delivery.eventId, timestamp, body),
    });
  }

  /** What the attempt makes of its delivery: delivered, retried after the next delay, failed, or gone. */
  private recorded(delivery: ClaimedDelivery, result: WebhookAttemptResult): RecordedAttempt {
    const attemptsMade = delivery.attemptCount + 1;
    const base = {
      deliveryId: delivery.id,
      claimedBy: delivery.claimedBy ?? '',
      at: result.at,
      httpStatus: result.httpStatus,
      durationMs: result.durationMs,
      error: result.error,
      responseBody: result.responseBody,
    };
    if (result.delivered) return { ...base, outcome: 'DELIVERED' };
    if (result.gone) return { ...base, outcome: 'GONE' };
    if (attemptsMade >= this.schedule.length) return { ...base, outcome: 'FAILED' };
    return { ...base, outcome: 'RETRY', retryInSeconds: retryDelaySeconds(this.schedule[attemptsMade], result.retryAfterSeconds) };
  }

  /** Records what has finished, one statement per batch; a claim follows at once when slots were freed. */
  private flush(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      while (this.finished.length > 0) {
        const batch = this.finished;
        this.finished = [];
        try {
          const disabled = await this.deliveries.record(batch);
          for (const endpointId of disabled) this.log.warn({ endpointId }, 'webhook endpoint answered 410 Gone: disabled');
        } catch (error) {
          // The claims lapse and the deliveries are attempted again: at least once, never lost.
          this.log.error({ err: error, attempts: batch.length }, 'webhook attempts not recorded; retried when their claims lapse');
        }
      }
    })().finally(() => {
      this.flushing = undefined;
      if (!this.stopping) void this.runNow().catch((error: unknown) => this.log.error({ err: error }, 'webhook claim failed'));
    });
  }
}

/** The delay before the next attempt: the schedule's, plus up to 10 % jitter; a longer `Retry-After` wins (bounded to a day). */
export function retryDelaySeconds(scheduled: number, retryAfterSeconds?: number, random: () => number = Math.random): number {
  const jittered = scheduled * (1 + WEBHOOK_RETRY_JITTER * random());
  if (retryAfterSeconds === undefined) return jittered;
  return Math.max(jittered, Math.min(retryAfterSeconds, WEBHOOK_MAX_RETRY_AFTER_SECONDS));
}
