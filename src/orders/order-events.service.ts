import { randomUUID } from 'node:crypto';
import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Client } from 'pg';
import { Observable } from 'rxjs';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import { sessionDatabaseUrl } from '../database/session-database-url';
import { APP_LOGGER } from '../logging/logging.module';
import type { OrderStatusEvent, StatusChangeRecord } from './order.types';
import { ORDER_EVENTS_CHANNEL, OrdersRepository } from './orders.repository';

const RECONNECT_DELAY_MS = 1_000;
/** How often the one catch-up query of this instance runs while notifications are not known to arrive. */
export const CATCH_UP_INTERVAL_MS = 1_000;
/** Sent on its own channel from another connection, to learn whether notifications cross connections. */
export const PROBE_CHANNEL = 'order_status_probe';
/** The listening connection's application_name: an operator (or a test) finds it in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'payments-bff order events';

/** One consumer of an order's transitions, typically an open event stream. */
export interface OrderWatcher {
  /**
   * The largest change id it has been given, from which the catch-up continues; undefined while
   * it is still reading its snapshot (or when it wants notifications only).
   */
  readonly position: bigint | undefined;
  /** May receive an event twice or out of order (notification and catch-up): deduplicate by changeId. */
  deliver(event: OrderStatusEvent): void;
  /** The instance is shutting down. */
  end(): void;
}

export function statusEventOf(change: StatusChangeRecord): OrderStatusEvent {
  return {
    orderId: change.orderId,
    changeId: String(change.id),
    fromStatus: change.fromStatus,
    status: change.toStatus,
    reason: change.reason,
    at: change.at.toISOString(),
  };
}

/**
 * Order transitions, whichever instance committed them, handed to the watchers of that order
 * through a map keyed by order id: an event costs work for its own order's watchers only.
 *
 * Three sources, all per instance and none per watcher:
 * - the repository publishes each transition with pg_notify inside its transaction, and one
 *   dedicated connection LISTENs for all of them;
 * - the instance that made the change hands it over directly (publishLocal), which is the only
 *   path on the embedded database (PGlite has one backend: a NOTIFY never reaches another
 *   connection);
 * - one catch-up query reads the changes of all watched orders past their watchers' positions.
 *   It runs every CATCH_UP_INTERVAL_MS while anything is watched and notifications are not known
 *   to arrive: until a probe sent from another connection has come back on the listening one
 *   (it never does on the embedded database, where a change made by another instance is learnt
 *   this way only), and while the listener is lost. Once the probe is back, one last catch-up
 *   covers what was committed before the LISTEN, and idle streams cause no query at all.
 *
 * The listener needs a session of its own: it connects to DATABASE_DIRECT_URL when set, never
 * through a transaction-mode pooler. Pooled without a direct URL (refused in production), nothing
 * listens and the catch-up runs whenever anything is watched.
 */
@Injectable()
export class OrderEventsService implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly watchers = new Map<string, Set<OrderWatcher>>();
  private client?: Client;
  private stopped = false;
  private reconnectTimer?: NodeJS.Timeout;
  private catchUpTimer?: NodeJS.Timeout;
  private catchingUp = false;
  private catchUpAgain = false;
  /** The probe that proves notifications arrive on the current listener; undefined once it has. */
  private awaitedProbe?: string;
  private notificationsArrive = false;

  /** Where the listener and the probe connect; undefined: nowhere (a pooler without DATABASE_DIRECT_URL). */
  private readonly listenUrl: string | undefined;

  constructor(
    private readonly orders: OrdersRepository,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    this.listenUrl = sessionDatabaseUrl({
      databaseUrl: config.get('databaseUrl', { infer: true }),
      databaseDirectUrl: config.get('databaseDirectUrl', { infer: true }),
      databasePooled: config.get('databasePooled', { infer: true }),
    });
  }

  async onModuleInit() {
    if (this.listenUrl) return this.listen();
    this.logger.warn(
      'DATABASE_URL goes through a pooler and DATABASE_DIRECT_URL is not set: order events are not listened for; ' +
        `live streams learn of other instances' changes by polling every ${CATCH_UP_INTERVAL_MS} ms`,
    );
  }

  /** Ends every open event stream before the HTTP server closes, which waits for open responses. */
  beforeApplicationShutdown() {
    this.stopped = true;
    this.stopCatchUp();
    for (const watchers of [...this.watchers.values()]) for (const watcher of [...watchers]) watcher.end();
    this.watchers.clear();
  }

  async onApplicationShutdown() {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    await this.client?.end().catch(() => undefined);
  }

  publishLocal(event: OrderStatusEvent | undefined) {
    if (event) this.route(event);
  }

  /** Hands the order's transitions to `watcher` until the returned function is called. */
  watch(orderId: string, watcher: OrderWatcher): () => void {
    if (this.stopped) {
      // Opened while the instance shuts down: it ends at once instead of holding the server open.
      watcher.end();
      return () => undefined;
    }
    let watchers = this.watchers.get(orderId);
    if (!watchers) this.watchers.set(orderId, (watchers = new Set()));
    watchers.add(watcher);
    if (!this.notificationsArrive) this.startCatchUp();
    return () => {
      const current = this.watchers.get(orderId);
      if (!current?.delete(watcher)) return;
      if (current.size === 0) this.watchers.delete(orderId);
      if (this.watchers.size === 0) this.stopCatchUp();
    };
  }

  /** The order's transitions as they are notified or published here (no catch-up), never ending. */
  forOrder(orderId: string): Observable<OrderStatusEvent> {
    return new Observable<OrderStatusEvent>((subscriber) =>
      this.watch(orderId, { position: undefined, deliver: (event) => subscriber.next(event), end: () => subscriber.complete() }),
    );
  }

  private route(event: OrderStatusEvent) {
    const watchers = this.watchers.get(event.orderId);
    if (!watchers) return;
    for (const watcher of [...watchers]) {
      try {
        watcher.deliver(event);
      } catch (error) {
        this.logger.error({ err: error, orderId: event.orderId }, 'an order event watcher failed');
      }
    }
  }

  private startCatchUp() {
    if (this.catchUpTimer || this.stopped) return;
    this.catchUpTimer = setInterval(() => void this.catchUp(), CATCH_UP_INTERVAL_MS);
    this.catchUpTimer.unref();
  }

  private stopCatchUp() {
    clearInterval(this.catchUpTimer);
    this.catchUpTimer = undefined;
  }

  /** Whether notifications committed on other connections are known to reach this instance now. */
  get notificationsProven(): boolean {
    return this.notificationsArrive;
  }

  /** One query for every watched order; while the previous one is still running, it runs again after it. */
  private async catchUp(): Promise<void> {
    if (this.catchingUp) {
      this.catchUpAgain = true;
      return;
    }
    const positions: { orderId: string; afterChangeId: bigint }[] = [];
    for (const [orderId, watchers] of this.watchers) {
      let behindmost: bigint | undefined;
      for (const { position } of watchers)
        if (position !== undefined && (behindmost === undefined || position < behindmost)) behindmost = position;
      if (behindmost !== undefined) positions.push({ orderId, afterChangeId: behindmost });
    }
    if (positions.length === 0) return;
    this.catchingUp = true;
    try {
      for (const change of await this.orders.changesAfter(positions)) this.route(statusEventOf(change));
    } catch (error) {
      this.logger.warn({ err: error }, 'order events catch-up failed; retrying on the next tick');
    } finally {
      this.catchingUp = false;
    }
    if (this.catchUpAgain) {
      this.catchUpAgain = false;
      await this.catchUp();
    }
  }

  private async listen() {
    const client = new Client({ connectionString: this.listenUrl, application_name: LISTENER_APPLICATION_NAME });
    client.on('notification', (message) => {
      if (message.channel === PROBE_CHANNEL) return this.probeArrived(message.payload);
      if (message.channel !== ORDER_EVENTS_CHANNEL || !message.payload) return;
      let event: OrderStatusEvent;
      try {
        event = JSON.parse(message.payload) as OrderStatusEvent;
      } catch {
        this.logger.warn({ channel: message.channel }, 'unreadable order event');
        return;
      }
      this.route(event);
    });
    client.on('error', (error) => {
      this.logger.warn({ err: error }, 'order events connection lost; reconnecting');
      this.scheduleReconnect();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${ORDER_EVENTS_CHANNEL}; LISTEN ${PROBE_CHANNEL}`);
      this.client = client;
      void this.sendProbe();
    } catch (error) {
      this.logger.warn({ err: error }, 'could not listen for order events; retrying');
      await client.end().catch(() => undefined);
      this.scheduleReconnect();
    }
  }

  /**
   * NOTIFY from a connection of its own: PostgreSQL delivers it to the listener, the embedded
   * PGlite (one session) does not. Not awaited: start-up does not wait for the answer.
   */
  private async sendProbe() {
    const probe = randomUUID();
    this.awaitedProbe = probe;
    const sender = new Client({ connectionString: this.listenUrl });
    // A connection lost after the query (the server going away) is of no interest; without a listener it would crash the process.
    sender.on('error', () => undefined);
    try {
      await sender.connect();
      await sender.query('SELECT pg_notify($1, $2)', [PROBE_CHANNEL, probe]);
    } catch (error) {
      this.logger.debug({ err: error }, 'could not probe order event notifications; the catch-up keeps running');
    } finally {
      await sender.end().catch(() => undefined);
    }
  }

  private probeArrived(probe: string | undefined) {
    if (!probe || probe !== this.awaitedProbe) return;
    this.awaitedProbe = undefined;
    this.notificationsArrive = true;
    this.stopCatchUp();
    if (this.watchers.size > 0) void this.catchUp();
  }

  private scheduleReconnect() {
    // Until the next listener is proven, the catch-up covers what its notifications would have said.
    this.notificationsArrive = false;
    this.awaitedProbe = undefined;
    if (this.watchers.size > 0) this.startCatchUp();
    if (this.stopped || this.reconnectTimer) return;
    const previous = this.client;
    this.client = undefined;
    void previous?.end().catch(() => undefined);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.listen();
    }, RECONNECT_DELAY_MS);
    this.reconnectTimer.unref();
  }
}
