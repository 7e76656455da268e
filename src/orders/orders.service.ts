import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import { canReadAll, canSee, listReaderOf, visibleOwnerOf, type AuthUser } from '../auth/auth.types';
import { NotFoundError } from '../common/domain-error';
import { csvCell, csvDecimalCell, csvRow } from '../common/csv';
import { afterCursor, DEFAULT_PAGE_SIZE, periodOf, positionOf, toPage, UUID_PATTERN } from '../common/pagination';
import { formatStoredAmount } from '../common/money';
import type { AppConfig } from '../config/app-config';
import { APP_LOGGER } from '../logging/logging.module';
import { MetricsService } from '../metrics/metrics.service';
import { AgentBudgetService } from '../provider/agent-budget.service';
import { PayinClient } from '../provider/clients/payin.client';
import { registerRecoveries } from '../provider-operations/operation-recovery';
import { CallbackUrlsService } from './callback-urls.service';
import { OrderEventsService } from './order-events.service';
import { OrderStreams, type OrderStreamClient } from './order-streams';
import { ORDER_STATUSES, type OrderFilter, type OrderRecord, type OrderStatus } from './order.types';
import type { CreateOrderDto, ListOrdersQueryDto, OrderDetailDto, OrderDto, OrderPageDto } from './orders.dto';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { OrdersRepository } from './orders.repository';
import { ORDER_RESOURCE, PAYIN_ORDERS_TABLE } from './payin-orders.table';
import { PayinSubmission } from './payin-submission';
import { OrderListsRepository, type OrderListRow } from './order-lists.repository';
import { toOrderDto } from './order-mappers';

/**
 * Rows per read of the CSV export: a batch's round trip stays small beside its formatting, and two
 * batches (the one written, the one read ahead) are what the export holds. With 5,000 a fresh
 * instance's RSS grew by 98 to 116 MB over its first export of 1,000,000 orders, with 1,000 by 73
 * to 91 MB (npm run bench:scale).
 */
export const EXPORT_BATCH_SIZE = 1_000;
const EXPORT_CHUNK_ROWS = 500;
/** Counting orders by status reads the whole table (its smallest index): done this often, whatever the scrape rate. */
export const ORDERS_BY_STATUS_REFRESH_MS = 30_000;
const CSV_COLUMNS = [
  'id',
  'reference',
  'createdAt',
  'updatedAt',
  'status',
  'amount',
  'currency',
  'service',
  'wallet',
  'payer',
  'payerEmail',
  'description',
  'providerReference',
  'providerTransactionReference',
  'failureReason',
  'needsReview',
] as const satisfies readonly (keyof OrderDto)[];

@Injectable()
export class OrdersService implements OnModuleInit {
  private readonly currencies: AppConfig['currencies'];
  private readonly reportsTimeZone: string;
  private readonly payins: PayinSubmission;

  constructor(
    private readonly orders: OrdersRepository,
    private readonly orderLists: OrderListsRepository,
    payin: PayinClient,
    callbackUrls: CallbackUrlsService,
    events: OrderEventsService,
    private readonly streams: OrderStreams,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) logger: Logger,
    private readonly metrics: MetricsService,
    private readonly idempotency: IdempotencyService,
    budget: AgentBudgetService,
  ) {
    this.currencies = config.get('currencies', { infer: true });
    this.reportsTimeZone = config.get('reportsTimeZone', { infer: true });
    this.payins = new PayinSubmission({
      orders,
      payin,
      callbackUrls,
      events,
      idempotency,
      budget,
      currencies: this.currencies,
      log: logger.child({ component: 'orders' }),
    });
  }

  onModuleInit() {
    // A retry of a pay-in whose request died answers the order as it is now (UNKNOWN once swept), never a second order.
    registerRecoveries(this.idempotency, PAYIN_ORDERS_TABLE, {
      [ORDER_RESOURCE]: async (id: string) => {
        const order = await this.orders.findById(id);
        return order && this.toDto(order);
      },
    });
    this.metrics.gaugeRefreshedEvery(
      'orders_by_status',
      `Orders by status (all instances: counted in the database every ${ORDERS_BY_STATUS_REFRESH_MS / 1000} s, not at each scrape)`,
      ['status'],
      ORDERS_BY_STATUS_REFRESH_MS,
      async () => zeroFilledByStatus(await this.orders.countByStatus()),
    );
  }

  /** `POST /v1/orders`: the pay-in submission (PayinSubmission). */
  create(user: AuthUser, dto: CreateOrderDto): Promise<OrderDto> {
    return this.payins.create(user, dto);
  }

  async get(user: AuthUser, id: string): Promise<OrderDetailDto> {
    // One statement: the owner is part of its WHERE, so another customer's order is simply not found.
    const detail = UUID_PATTERN.test(id) ? await this.orders.findDetail(id, canReadAll(user) ? undefined : user.id) : undefined;
    if (!detail) throw new NotFoundError(`No order ${id}.`);
    return {
      ...this.toDto(detail.order),
      // Who decided by hand, and why, is back-office information: a customer sees that it happened, not the notes.
      history: detail.history.map((h) => ({
        fromStatus: h.fromStatus,
        status: h.toStatus,
        reason: h.reason,
        detail: h.detail,
        callbackId: h.callbackId,
        actor: canReadAll(user) ? h.actor : null,
        note: canReadAll(user) ? h.note : null,
        at: h.at.toISOString(),
      })),
      callbacks: detail.callbacks.map((c) => ({ id: c.id, outcome: c.outcome, result: c.result, receivedAt: c.receivedAt.toISOString() })),
    };
  }

  async list(user: AuthUser, query: ListOrdersQueryDto): Promise<OrderPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const filter = filterFor(user, query, this.reportsTimeZone);
    const rows = await this.orderLists.list(filter, { limit: limit + 1, after: afterCursor(query.cursor) }, listReaderOf(user));
    return toPage(rows, limit, positionOf, (o) => this.toDto(o));
  }

  /**
   * The filtered orders as CSV, newest first, read in keyset batches: memory stays flat whatever
   * the number of orders. The next batch is read while the current one is written out, so that
   * the database and the formatting overlap; at most one batch waits while the client is slow.
   */
  async *exportCsv(user: AuthUser, query: ListOrdersQueryDto): AsyncGenerator<string> {
    const filter = filterFor(user, query, this.reportsTimeZone);
    yield csvRow(CSV_COLUMNS);
    let next = this.orderLists.list(filter, { limit: EXPORT_BATCH_SIZE }, listReaderOf(user));
    for (;;) {
      const batch = await next;
      const last = batch[batch.length - 1];
      if (!last) return;
      const more = batch.length === EXPORT_BATCH_SIZE;
      if (more) {
        next = this.orderLists.list(filter, { limit: EXPORT_BATCH_SIZE, after: positionOf(last) }, listReaderOf(user));
        // A client leaving mid-export ends this generator before the read ahead is awaited: its failure is nobody's then.
        next.catch(() => undefined);
      }
      // Written out a slice at a time: the stream buffers a few chunks ahead of a slow client, and small ones keep that small.
      for (let start = 0; start < batch.length; start += EXPORT_CHUNK_ROWS) {
        let chunk = '';
        for (const row of batch.slice(start, start + EXPORT_CHUNK_ROWS)) chunk += this.csvLine(row);
        yield chunk;
      }
      if (!more) return;
    }
  }

  /**
   * The live status stream of one order, written to `client`. Its place among the open streams is
   * taken first, so a caller over the caps costs no database work; it is released once, whichever
   * way the stream ends: the client leaving (also before the stream starts), the stream's own
   * end, the instance shutting down, or a refusal here. Resolves once the snapshot is sent; until
   * then an error (404, 429, a failed read) is the answer.
   */
  /** The order's live status stream; `lastEventId` (a reconnecting client's) replays what came after it: see OrderStreams.follow. */
  async streamStatus(user: AuthUser, id: string, client: OrderStreamClient, lastEventId?: bigint): Promise<void> {
    const slot = this.streams.reserve(user.id);
    client.onClose(() => slot.release());
    try {
      // Checked before the stream opens, so that a stranger gets a 404 rather than an empty 200 stream.
      const order = await this.findVisible(user, id);
      if (client.closed) return slot.release();
      await this.streams.follow(order, slot, client, lastEventId);
    } catch (error) {
      slot.release();
      throw error;
    }
  }

  /** Existing and visible to this user, or 404: another customer's order does not exist for them. */
  private async findVisible(user: AuthUser, id: string): Promise<OrderRecord> {
    const order = UUID_PATTERN.test(id) ? await this.orders.findById(id) : undefined;
    if (!order || !canSee(user, order.customerId)) throw new NotFoundError(`No order ${id}.`);
    return order;
  }

  /**
   * An export row as its CSV line: the cells of toDto (the times are already ISO text). No object
   * or array per row: the export's rate is bound by what it allocates.
   */
  private csvLine(row: OrderListRow): string {
    let line = this.csvCellOf(row, CSV_COLUMNS[0]);
    for (let i = 1; i < CSV_COLUMNS.length; i++) line += `,${this.csvCellOf(row, CSV_COLUMNS[i])}`;
    return `${line}\r\n`;
  }

  private csvCellOf(row: OrderListRow, column: (typeof CSV_COLUMNS)[number]): string {
    // The amount is a number for the spreadsheet (exempt from the formula prefix); every other cell is text.
    return column === 'amount' ? csvDecimalCell(formatStoredAmount(row.amount, row.currency, this.currencies)) : csvCell(row[column]);
  }

  private toDto(order: OrderRecord | OrderListRow): OrderDto {
    return toOrderDto(order, this.currencies);
  }
}

function filterFor(user: AuthUser, query: ListOrdersQueryDto, reportsTimeZone: string): OrderFilter {
  return {
    customerId: visibleOwnerOf(user),
    status: query.status,
    currency: query.currency,
    ...periodOf(query, reportsTimeZone),
    needsReview: query.needsReview,
  };
}

/** Every status, zero included: a series that vanishes at zero reads as "no data" on a dashboard. */
function zeroFilledByStatus(counts: { status: OrderStatus; count: number }[]) {
  return ORDER_STATUSES.map((status) => ({ labels: { status }, value: counts.find((c) => c.status === status)?.count ?? 0 }));
}
