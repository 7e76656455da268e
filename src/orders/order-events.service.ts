import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Client } from 'pg';
import { Observable, Subject, filter } from 'rxjs';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { APP_LOGGER } from '../logging/logging.module';
import type { OrderStatusEvent } from './order.types';
import { ORDER_EVENTS_CHANNEL } from './orders.repository';

const RECONNECT_DELAY_MS = 1_000;

/**
 * Order transitions as a stream, whichever instance committed them. The repository publishes each
 * with pg_notify inside its transaction; this service LISTENs on a dedicated connection. The
 * instance that made the change also hands it over directly, which is the only path on the
 * embedded database (PGlite has one backend, so a NOTIFY never reaches another connection).
 * Subscribers may therefore see an event twice and deduplicate by changeId.
 */
@Injectable()
export class OrderEventsService implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly events = new Subject<OrderStatusEvent>();
  private client?: Client;
  private stopped = false;
  private reconnectTimer?: NodeJS.Timeout;

  constructor(
    @InjectConfig() private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  async onModuleInit() {
    await this.listen();
  }

  /** Ends every open event stream before the HTTP server closes, which waits for open responses. */
  beforeApplicationShutdown() {
    this.events.complete();
  }

  async onApplicationShutdown() {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    await this.client?.end().catch(() => undefined);
  }

  publishLocal(event: OrderStatusEvent | undefined) {
    if (event) this.events.next(event);
  }

  forOrder(orderId: string): Observable<OrderStatusEvent> {
    return this.events.pipe(filter((e) => e.orderId === orderId));
  }

  private async listen() {
    const client = new Client({ connectionString: this.config.databaseUrl });
    client.on('notification', (message) => {
      if (message.channel !== ORDER_EVENTS_CHANNEL || !message.payload) return;
      try {
        this.events.next(JSON.parse(message.payload) as OrderStatusEvent);
      } catch {
        this.logger.warn({ channel: message.channel }, 'unreadable order event');
      }
    });
    client.on('error', (error) => {
      this.logger.warn({ err: error }, 'order events connection lost; reconnecting');
      this.scheduleReconnect();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${ORDER_EVENTS_CHANNEL}`);
      this.client = client;
    } catch (error) {
      this.logger.warn({ err: error }, 'could not listen for order events; retrying');
      await client.end().catch(() => undefined);
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect() {
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
