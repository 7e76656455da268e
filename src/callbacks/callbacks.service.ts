import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NotFoundError } from '../common/domain-error';
import { truncateUtf8 } from '../common/truncate-utf8';
import { afterCursor, DEFAULT_PAGE_SIZE, periodOf, toPage, UUID_PATTERN } from '../common/pagination';
import type { AppConfig } from '../config/app-config';
import { redact, REDACTED } from '../logging/redaction';
import { isCredentialHeaderName, isSecretKeyName } from '../logging/secret-key-names';
import { storableJson, storableText } from '../logging/storable-text';
import { MetricsService } from '../metrics/metrics.service';
import { ORDER_CALLBACKS, type OrderCallbacks } from '../orders/order-callbacks.port';
import type { CallbackRecord } from './callback.types';
import type { CallbackAckDto, CallbackPageDto, CallbackRecordDto, ListCallbacksQueryDto } from './callbacks.dto';
import { CallbacksRepository } from './callbacks.repository';

/** What is kept of a callback: its body up to 64 KiB, or 1 KiB (and short headers) when it is rejected. */
export const STORED_BODY_BYTES = 64 * 1024;
const REJECTED_BODY_BYTES = 1024;
const REJECTED_VALUE_CHARS = 256;
const REJECTED_MEMBERS = 32;
const STORED_CONTENT_TYPE_CHARS = 256;
/** What is kept of the path of a rejected callback: anyone can make it as long as the router allows. */
const STORED_PATH_CHARS = 256;

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
  private readonly reportsTimeZone: string;

  constructor(
    @Inject(ORDER_CALLBACKS) private readonly orders: OrderCallbacks,
    private readonly callbacks: CallbacksRepository,
    private readonly metrics: MetricsService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.reportsTimeZone = config.get('reportsTimeZone', { infer: true });
  }

  /**
   * The provider's notification: stored with what it did before it is acknowledged. Whatever its
   * payload says, only the URL it was sent to (and that URL's token) decides the outcome: the
   * payload is not documented, the token is ours. A wrong token is stored as REJECTED and
   * answered 404 like a URL that does not exist.
   */
  async receive(arrived: ArrivedCallback): Promise<CallbackAckDto> {
    const outcome = arrived.outcome === 'success' || arrived.outcome === 'failure' ? arrived.outcome : undefined;
    const tokenValid =
      outcome !== undefined &&
      UUID_PATTERN.test(arrived.pathOrderId) &&
      this.orders.verifyCallbackUrl(arrived.pathOrderId, outcome, arrived.query.token);
    // Anyone can call a callback URL: what a wrong token brings is kept only in a bounded form.
    const bound = tokenValid ? (value: Record<string, unknown>) => value : boundedMembers;
    // A path that is not ours (a NUL, any text) is kept as storable, bounded text: a valid one is a
    // UUID and `success` or `failure`, which these leave unchanged.
    const { callback, event } = await this.callbacks.storeAndApply({
      pathOrderId: storableText(arrived.pathOrderId.slice(0, STORED_PATH_CHARS)),
      verified: tokenValid ? { orderId: arrived.pathOrderId, outcome } : null,
      outcome: storableText(arrived.outcome.slice(0, STORED_PATH_CHARS)),
      method: arrived.method,
      query: storableJson(bound(redactQuery(arrived.query))),
      headers: storableJson(bound(redactHeaders(arrived.headers))),
      contentType: arrived.contentType === null ? null : storableText(arrived.contentType.slice(0, STORED_CONTENT_TYPE_CHARS)),
      rawBody:
        arrived.rawBody === null ? null : storableText(truncateUtf8(arrived.rawBody, tokenValid ? STORED_BODY_BYTES : REJECTED_BODY_BYTES)),
      remoteIp: arrived.remoteIp,
      requestId: arrived.requestId,
    });
    this.orders.publishLocal(event);
    this.metrics.callbacks.inc({
      outcome: ['success', 'failure'].includes(arrived.outcome) ? arrived.outcome : 'other',
      result: callback.result,
    });
    if (callback.result === 'REJECTED') throw new NotFoundError('No such callback URL.');
    return { status: 'received', callbackId: callback.id };
  }

  async list(query: ListCallbacksQueryDto): Promise<CallbackPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.callbacks.list(
      { orderId: query.orderId, outcome: query.outcome, result: query.result, ...periodOf(query, this.reportsTimeZone) },
      { limit: limit + 1, after: afterCursor(query.cursor) },
    );
    return toPage(rows, limit, (c) => ({ at: c.receivedAt, id: c.id }), toDto);
  }
}

/**
 * Query parameters with every secret-like name redacted (`isSecretKeyName`: a provider may sign or
 * authenticate its call in a parameter named its own way), the callback token first of all; other
 * values go through `redact` (configured secret values). Rebuilt with `Object.fromEntries`, so a
 * member named `__proto__` is kept as the data it is.
 */
function redactQuery(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(query).map(([name, value]) => [
      name,
      isSecretKeyName(name) && value !== undefined && value !== null ? REDACTED : redact(value),
    ]),
  );
}

/**
 * Headers with every credential-like name redacted (`Proxy-Authorization`, `X-Auth-Token`,
 * `X-Signature`: whoever calls a callback URL may send its own, and finance reads them back); the
 * others through `redact`.
 */
function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      isCredentialHeaderName(name) && value !== undefined && value !== null ? REDACTED : redact(value),
    ]),
  );
}

/** At most REJECTED_MEMBERS members, each value (or each of its elements) cut to REJECTED_VALUE_CHARS. */
function boundedMembers(value: Record<string, unknown>): Record<string, unknown> {
  const cut = (member: unknown): unknown =>
    typeof member === 'string'
      ? member.slice(0, REJECTED_VALUE_CHARS)
      : Array.isArray(member)
        ? member.slice(0, REJECTED_MEMBERS).map(cut)
        : typeof member === 'object' && member !== null
          ? '[object]'
          : member;
  return Object.fromEntries(
    Object.entries(value)
      .slice(0, REJECTED_MEMBERS)
      .map(([name, member]) => [name.slice(0, REJECTED_VALUE_CHARS), cut(member)]),
  );
}

/** Redacted again when read: a record stored before a name was known to be secret is not shown in clear either. */
function toDto(record: CallbackRecord): CallbackRecordDto {
  const members = (value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  const headers = members(record.headers);
  const query = members(record.query);
  return {
    ...record,
    headers: headers ? redactHeaders(headers) : record.headers,
    query: query ? redactQuery(query) : record.query,
    receivedAt: record.receivedAt.toISOString(),
  };
}
