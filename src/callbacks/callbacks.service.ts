import { Injectable } from '@nestjs/common';
import { NotFoundError, ValidationFailedError } from '../common/domain-error';
import { redact, REDACTED } from '../logging/redaction';
import { MetricsService } from '../metrics/metrics.service';
import { CallbackUrlsService } from '../orders/callback-urls.service';
import type { CallbackRecord } from '../orders/order.types';
import { OrdersService } from '../orders/orders.service';
import type { CallbackAckDto, CallbackPageDto, CallbackRecordDto, ListCallbacksQueryDto } from './callbacks.dto';
import { CallbacksRepository } from './callbacks.repository';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
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
    const tokenValid = UUID.test(arrived.pathOrderId) && this.urls.verify(arrived.pathOrderId, arrived.outcome, arrived.query.token);
    const callback = await this.orders.applyCallback({
      pathOrderId: arrived.pathOrderId,
      verifiedOrderId: tokenValid ? arrived.pathOrderId : null,
      outcome: arrived.outcome,
      method: arrived.method,
      query: { ...arrived.query, ...(arrived.query.token !== undefined ? { token: REDACTED } : {}) },
      headers: redact(arrived.headers),
      contentType: arrived.contentType,
      rawBody: arrived.rawBody === null ? null : arrived.rawBody.slice(0, MAX_STORED_BODY),
      remoteIp: arrived.remoteIp,
      requestId: arrived.requestId,
    });
    this.metrics.callbacks.inc({ outcome: ['success', 'failure'].includes(arrived.outcome) ? arrived.outcome : 'other', result: callback.result });
    if (callback.result === 'REJECTED') throw new NotFoundError('No such callback URL.');
    return { status: 'received', callbackId: callback.id };
  }

  async list(query: ListCallbacksQueryDto): Promise<CallbackPageDto> {
    const limit = query.limit ?? 50;
    const after = query.cursor ? decodeCursor(query.cursor) : undefined;
    const rows = await this.callbacks.list(
      { orderId: query.orderId, outcome: query.outcome, result: query.result, from: query.from ? new Date(query.from) : undefined, to: query.to ? new Date(query.to) : undefined },
      limit + 1,
      after,
    );
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items: items.map(toDto),
      nextCursor: rows.length > limit && last ? Buffer.from(`${last.receivedAt.toISOString()}|${last.id}`).toString('base64url') : null,
    };
  }
}

function toDto(record: CallbackRecord): CallbackRecordDto {
  return { ...record, receivedAt: record.receivedAt.toISOString() };
}

function decodeCursor(cursor: string): { receivedAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const receivedAt = new Date(at ?? '');
  if (!id || !UUID.test(id) || Number.isNaN(receivedAt.getTime())) throw new ValidationFailedError([{ field: 'cursor', message: 'cursor is not one this API returned' }]);
  return { receivedAt, id };
}
