import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One value of a gauge, with its labels. */
type GaugeSample<L extends string> = { labels: Record<L, string>; value: number };

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The service's Prometheus series, on a registry of its own (one per app instance, so that two
 * instances in one process, as in tests, do not mix their numbers). Areas that know a value only
 * at scrape time (budget left, streams open) register a gauge with `gaugeCollectedOnScrape`; a
 * value too costly to read on every scrape (orders by status) registers with `gaugeRefreshedEvery`.
 */
@Injectable()
export class MetricsService implements OnApplicationShutdown {
  readonly registry = new Registry();
  private readonly refreshTimers = new Set<NodeJS.Timeout>();

  private counter<L extends string>(name: string, help: string, labelNames: readonly L[]) {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  private latencyHistogram<L extends string>(name: string, help: string, labelNames: readonly L[]) {
    return new Histogram({ name, help, labelNames, buckets: LATENCY_BUCKETS, registers: [this.registry] });
  }

  readonly httpRequests = this.counter('http_requests_total', 'HTTP requests answered, by method, route pattern and status', [
    'method',
    'route',
    'status',
  ]);

  readonly httpDuration = this.latencyHistogram('http_request_duration_seconds', 'HTTP request latency, by method and route pattern', [
    'method',
    'route',
  ]);

  readonly providerCalls = this.counter('provider_calls_total', 'Calls to the payment provider, by endpoint and outcome', [
    'endpoint',
    'outcome',
  ]);

  readonly providerDuration = this.latencyHistogram(
    'provider_call_duration_seconds',
    'Latency of calls to the payment provider, by endpoint',
    ['endpoint'],
  );

  readonly tokenRefreshes = this.counter('provider_token_refreshes_total', 'Provider bearer tokens obtained by this instance, by result', [
    'result',
  ]);

  readonly callbacks = this.counter(
    'provider_callbacks_total',
    'Provider callbacks received by this instance, by outcome (success/failure) and result (APPLIED, DUPLICATE, CONFLICT, REJECTED)',
    ['outcome', 'result'],
  );

  readonly webhookAttempts = this.counter(
    'webhook_attempts_total',
    'Webhook delivery attempts finished by this instance, by what each made of its delivery: DELIVERED, RETRY (failed, tried again later), FAILED (failed, the last attempt: given up), GONE (410: endpoint disabled)',
    ['outcome'],
  );

  readonly webhookSecretsUnreadable = this.counter(
    'webhook_signing_secrets_unreadable_total',
    "Webhook attempts for which an endpoint's signing secret could not be opened (no configured key opens it), by secret: current (the attempt is not sent) or previous (signed with the current one only)",
    ['secret'],
  );

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** A gauge whose values are read when Prometheus scrapes (from the database, shared by all instances). */
  gaugeCollectedOnScrape<L extends string>(name: string, help: string, labelNames: readonly L[], read: () => Promise<GaugeSample<L>[]>) {
    return this.gaugeOf(name, help, labelNames, read);
  }

  /**
   * A gauge read in the background, never at scrape time: the first scrape reads it (an instance
   * nobody scrapes never does), and from then on it is read again every `intervalMs` while
   * scrapes answer the last values read, however often Prometheus (or several of them) scrapes.
   * A failed background read keeps the last values; with none yet, the scrape fails (like any
   * failed read) and the next scrape tries again.
   */
  gaugeRefreshedEvery<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    intervalMs: number,
    read: () => Promise<GaugeSample<L>[]>,
  ) {
    let values: GaugeSample<L>[] | undefined;
    let reading: Promise<GaugeSample<L>[]> | undefined;
    const refresh = () =>
      (reading ??= read()
        .then((read) => (values = read))
        .finally(() => (reading = undefined)));
    let timer: NodeJS.Timeout | undefined;
    return this.gaugeOf(name, help, labelNames, async () => {
      const current = values ?? (await refresh());
      if (!timer) {
        timer = setInterval(() => void refresh().catch(() => undefined), intervalMs);
        timer.unref();
        this.refreshTimers.add(timer);
      }
      return current;
    });
  }

  /** A gauge whose samples, all of them, come from `samples` at each scrape (the previous ones cleared). */
  private gaugeOf<L extends string>(name: string, help: string, labelNames: readonly L[], samples: () => Promise<GaugeSample<L>[]>) {
    return new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        const current = await samples();
        this.reset();
        for (const { labels, value } of current) this.set(labels as never, value);
      },
    });
  }

  onApplicationShutdown() {
    for (const timer of this.refreshTimers) clearInterval(timer);
    this.refreshTimers.clear();
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
