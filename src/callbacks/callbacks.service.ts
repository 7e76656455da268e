import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/domain-error';
import { decodeCursor, DEFAULT_PAGE_SIZE, periodOf, toPage, UUID_PATTERN } from '../common/pagination';
import { redact, REDACTED } from '../logging/redaction';
import { MetricsService } from '../metrics/metrics.service';
import { CallbackUrlsService } from '../orders/callback-urls.service';
import type { CallbackRecord } from '../orders/order.types';
import { OrdersService } from '../orders/orders.service';
import type { CallbackAckDto, CallbackPageDto, CallbackRecordDto, ListCallbacksQueryDto } from './callbacks.dto';
import { CallbacksRepository } from './callbacks.repository';

const MAX_STORED_BODY = 64 * 1024;

export interface ArrivedCallback {
  pathOrderId: string;
  outcome: string;
  method: string;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  contentType: string | null;
  rawBody: string | null;
  remoteIp: string | null;
  requestId: string | null;
}

@Injectable()
export class CallbacksService {
  constructor(
    private readonly orders: OrdersService,
    private readonly urls: CallbackUrlsService,
    private readonly callbacks: CallbacksRepository,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * The provider's notification: stored with what it did before it is acknowledged. Whatever its
   * payload says, only the URL it was sent to (and that URL's token) decides the outcome: the
   * payload is not documented, the token is ours. A wrong token is stored as REJECTED and
   * answered 404 like a URL that does not exist.
   */
  async receive(arrived: ArrivedCallback): Promise<CallbackAckDto> {
    const tokenValid = UUID_PATTERN.test(arrived.pathOrderId) && this.urls.verify(arrived.pathOrderId, arrived.outcome, arrived.query.token);
    const callback = await this.orders.applyCallback({
      pathOrderId: arrived.pathOrderId,
      verifiedOrderId: tokenValid ? arrived.pathOrderId : null,
      outcome: arrived.outcome,
      method: arrived.method,
      query: { ...arrived.query, ...(arrived.query.token !== undefined ? { token: REDACTED } : {}) },
      headers: redact(arrived.headers),
      contentType: arrived.contentType,
      rawBody: arrived.rawBody === null ? null : storableText(arrived.rawBody.slice(0, MAX_STORED_BODY)),
      remoteIp: arrived.remoteIp,
      requestId: arrived.requestId,
    });
    this.metrics.callbacks.inc({ outcome: ['success', 'failure'].includes(arrived.outcome) ? arrived.outcome : 'other', result: callback.result });
    if (callback.result === 'REJECTED') throw new NotFoundError('No such callback URL.');
    return { status: 'received', callbackId: callback.id };
  }

  async list(query: ListCallbacksQueryDto): Promise<CallbackPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const after = query.cursor ? decodeCursor(query.cursor) : undefined;
    const rows = await this.callbacks.list(
      { orderId: query.orderId, outcome: query.outcome, result: query.result, ...periodOf(query) },
      limit + 1,
      after && { receivedAt: after.at, id: after.id },
    );
    return toPage(rows, limit, (c) => ({ at: c.receivedAt, id: c.id }), toDto);
  }
}

/**
 * PostgreSQL text cannot hold NUL characters: a body carrying one would fail to store forever and
 * be retried forever. It is kept with each NUL shown as U+FFFD instead.
 */
function storableText(text: string): string {
  return text.includes('\u0000') ? text.replace(/\u0000/g, '\uFFFD') : text;
}

function toDto(record: CallbackRecord): CallbackRecordDto {
  return { ...record, receivedAt: record.receivedAt.toISOString() };
}
