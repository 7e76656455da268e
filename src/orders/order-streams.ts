import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DomainError } from '../common/domain-error';
import type { AppConfig } from '../config/app-config';
import { MetricsService } from '../metrics/metrics.service';
import { OrderEventsService, statusEventOf, type OrderWatcher } from './order-events.service';
import { FINAL_STATUSES, type OrderRecord, type OrderStatusEvent } from './order.types';
import { OrdersRepository } from './orders.repository';

/** A stream lasts until its order is decided, which may take hours: the client is told to come back a little later. */
export const STREAM_RETRY_AFTER_SECONDS = 10;

export class TooManyStreamsError extends DomainError {
  readonly status = 429;
  readonly code = 'too_many_streams';
  readonly title = 'Too many open live streams';
  override readonly headers = { 'retry-after': String(STREAM_RETRY_AFTER_SECONDS) };
}

/**
 * What an open stream carries: a status event, a keep-alive for the proxies in between, or, last
 * before the instance ends the stream at shutdown, how long the client should wait before it
 * reconnects (`retry:`).
 */
export type OrderStreamMessage =
  { kind: 'status'; event: OrderStatusEvent } | { kind: 'keepAlive' } | { kind: 'reconnect'; retryMs: number };
const KEEP_ALIVE: OrderStreamMessage = { kind: 'keepAlive' };
/** Into how many groups the keep-alives of one interval are spread. */
const KEEP_ALIVE_SPREAD = 15;
/**
 * The reconnection delay sent to streams ended by a shutdown: 1 to 3 s, drawn per stream, so that
 * the streams of a restarted instance come back through the load balancer spread over two seconds
 * rather than all at once.
 */
const RECONNECT_MIN_MS = 1_000;
const RECONNECT_SPREAD_MS = 2_000;
/** The largest change id there can be (a PostgreSQL bigint). */
const MAX_CHANGE_ID = 2n ** 63n - 1n;

/**
 * The change id a reconnecting client names in `Last-Event-ID`: a positive decimal integer that
 * fits a bigint. Anything else is malformed and ignored (the stream starts afresh).
 */
export function parseLastEventId(header: string | undefined): bigint | undefined {
  if (header === undefined || !/^[1-9]\d{0,18}$/.test(header)) return undefined;
  const id = BigInt(header);
  return id <= MAX_CHANGE_ID ? id : undefined;
}

/**
 * The client end of a stream, as the HTTP layer holds it: messages go out as they come, nothing
 * is queued here. `onClose` runs once the client has gone or the stream has ended.
 */
export interface OrderStreamClient {
  readonly closed: boolean;
  onClose(listener: () => void): void;
  send(message: OrderStreamMessage): void;
  end(): void;
}

/** A place among the open streams, held from the request until the stream ends; released once. */
export interface StreamSlot {
  release(): void;
}

/**
 * The live status streams of this instance: their places (per user and in total, counted in
 * this process: see docs/api/orders.md for why not across instances), one keep-alive timer for all of
 * them, and each stream's own state, kept small: a stream is a watcher in OrderEventsService's
 * map, a position and a keep-alive entry. Once its snapshot is read, an idle stream does no
 * database work; the catch-up query is shared by all streams of the instance.
 */
@Injectable()
export class OrderStreams implements OnModuleInit, OnApplicationShutdown {
  private open = 0;
  private readonly openPerUser = new Map<string, number>();
  private readonly keepAliveGroups = Array.from({ length: KEEP_ALIVE_SPREAD }, () => new Set<() => void>());
  private nextKeepAliveGroup = 0;
  private keepAliveTick = 0;
  private keepAliveCount = 0;
  private keepAliveTimer?: NodeJS.Timeout;

  private readonly sse: AppConfig['sse'];

  constructor(
    private readonly events: OrderEventsService,
    private readonly orders: OrdersRepository,
    private readonly metrics: MetricsService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.sse = config.get('sse', { infer: true });
  }

  onModuleInit() {
    this.metrics.gaugeCollectedOnScrape('order_event_streams_open', 'Live order status streams open on this instance', [], () =>
      Promise.resolve([{ labels: {}, value: this.open }]),
    );
  }

  onApplicationShutdown() {
    this.stopKeepAlive();
  }

  /** Counts of open streams on this instance, in total and for one user. */
  openStreams(userId?: string): number {
    return userId === undefined ? this.open : (this.openPerUser.get(userId) ?? 0);
  }

  /** Takes a place for a new stream of `userId`, or refuses with 429 when a cap is reached. */
  reserve(userId: string): StreamSlot {
    const { maxStreamsPerUser, maxStreams } = this.sse;
    const ofUser = this.openPerUser.get(userId) ?? 0;
    if (ofUser >= maxStreamsPerUser) {
      throw new TooManyStreamsError(`At most ${maxStreamsPerUser} live streams per user may be open at once; close one or retry later.`);
    }
    if (this.open >= maxStreams) throw new TooManyStreamsError('This instance holds as many live streams as it allows; retry later.');
    this.open++;
    this.openPerUser.set(userId, ofUser + 1);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.open--;
        const left = (this.openPerUser.get(userId) ?? 1) - 1;
        if (left > 0) this.openPerUser.set(userId, left);
        else this.openPerUser.delete(userId);
      },
    };
  }

  /**
   * The order's current status (one history read), then each transition, ending after a final
   * one, with keep-alives in between. With `lastEventId`, the id of one of this order's changes
   * (a reconnecting client's Last-Event-ID), every change after it is sent instead of the current
   * status, in order, and nothing when there is none (the stream ends at once when the order is
   * already decided); an id that is not one of this order's changes is ignored. Transitions
   * arriving while the history is read are held and replayed after it, so none falls between;
   * each is delivered once, by change id. Resolves once the snapshot is sent; a failed history
   * read rejects before anything was sent. From then on the stream lives in the callbacks of the
   * watcher, the keep-alive timer and `client`. A shutdown ends it after a `reconnect` message.
   */
  async follow(order: OrderRecord, slot: StreamSlot, client: OrderStreamClient, lastEventId?: bigint): Promise<void> {
    // Only these few fields stay with the stream, not the whole order record.
    const orderId = order.id;
    const unrecorded: OrderStatusEvent = {
      orderId,
      changeId: '0',
      fromStatus: null,
      status: order.status,
      reason: 'created',
      at: order.updatedAt.toISOString(),
    };
    let position: bigint | undefined;
    let held: OrderStatusEvent[] | undefined = [];
    let stopped = false;
    // Assigned below; watch() may end the stream at once (the instance is shutting down).
    let unwatch = () => {};
    let stopKeepAlive = () => {};
    const stop = () => {
      if (stopped) return;
      stopped = true;
      unwatch();
      stopKeepAlive();
      slot.release();
    };
    const end = () => {
      stop();
      client.end();
    };
    const emit = (event: OrderStatusEvent) => {
      const changeId = BigInt(event.changeId);
      if (stopped || (position !== undefined && changeId <= position)) return;
      position = changeId;
      client.send({ kind: 'status', event });
      if (FINAL_STATUSES.includes(event.status)) end();
    };
    const watcher: OrderWatcher = {
      get position() {
        return held ? undefined : position;
      },
      deliver: (event) => (held ? held.push(event) : emit(event)),
      // The instance shuts down: the client is told to come back (to another instance) soon.
      end: () => {
        if (!stopped) client.send({ kind: 'reconnect', retryMs: RECONNECT_MIN_MS + Math.floor(Math.random() * RECONNECT_SPREAD_MS) });
        end();
      },
    };
    client.onClose(stop);
    if (client.closed) return stop();
    unwatch = this.events.watch(orderId, watcher);
    if (stopped) return;
    // Nothing is written before the snapshot: until then a failure can still be answered as an error.
    stopKeepAlive = this.addKeepAlive(() => {
      if (!held) client.send(KEEP_ALIVE);
    });
    let history;
    try {
      history = await this.orders.history(orderId);
    } catch (error) {
      stop();
      // A stream the client or the shutdown has already ended has nobody left to tell.
      if (client.closed) return;
      throw error;
    }
    if (stopped) return;
    const latest = history[history.length - 1];
    const arrived = held ?? [];
    held = undefined;
    if (lastEventId !== undefined && history.some((change) => change.id === lastEventId)) {
      // The client has everything up to its last event: what it missed, then live.
      position = lastEventId;
      for (const change of history) if (change.id > lastEventId) emit(statusEventOf(change));
      if (!stopped && latest.id === lastEventId && FINAL_STATUSES.includes(latest.toStatus)) return end();
    } else {
      emit(latest ? statusEventOf(latest) : unrecorded);
    }
    for (const event of arrived.sort((a, b) => (BigInt(a.changeId) < BigInt(b.changeId) ? -1 : 1))) emit(event);
  }

  /**
   * Streams are dealt round-robin into KEEP_ALIVE_SPREAD groups and the timer serves one group per
   * tick, so each stream gets one comment per interval without writing to all of them at once.
   */
  private addKeepAlive(keepAlive: () => void): () => void {
    const group = this.keepAliveGroups[this.nextKeepAliveGroup];
    this.nextKeepAliveGroup = (this.nextKeepAliveGroup + 1) % KEEP_ALIVE_SPREAD;
    group.add(keepAlive);
    this.keepAliveCount++;
    if (!this.keepAliveTimer) {
      this.keepAliveTimer = setInterval(
        () => {
          for (const send of this.keepAliveGroups[this.keepAliveTick]) send();
          this.keepAliveTick = (this.keepAliveTick + 1) % KEEP_ALIVE_SPREAD;
        },
        (this.sse.keepAliveSeconds * 1000) / KEEP_ALIVE_SPREAD,
      );
      this.keepAliveTimer.unref();
    }
    return () => {
      if (!group.delete(keepAlive)) return;
      if (--this.keepAliveCount === 0) this.stopKeepAlive();
    };
  }

  private stopKeepAlive() {
    clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = undefined;
  }
}
