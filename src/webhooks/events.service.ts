import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { auditEventOf } from '../audit/audit.service';
import { hasRole, type AuthUser } from '../auth/auth.types';
import { ConflictError, NotFoundError } from '../common/domain-error';
import { afterCursor, DEFAULT_PAGE_SIZE, periodOf, toPage, type KeysetPosition } from '../common/pagination';
import { truncateUtf8 } from '../common/truncate-utf8';
import type { AppConfig } from '../config/app-config';
import { withoutAddresses } from './attempt-error';
import { endpointOrigin } from './endpoint-origin';
import { eventData } from './event-body';
import type {
  EventDetailDto,
  EventDto,
  EventPageDto,
  ListEventsQueryDto,
  RedeliverEventDto,
  RedeliveriesDto,
  WebhookDeliveryDto,
} from './events.dto';
import { EVENT_ID_PATTERN, EventsRepository } from './events.repository';
import type { EventRecord, WebhookDeliveryRecord } from './events.types';

/** What an attempt keeps of the endpoint's answer. */
export const RESPONSE_BODY_BYTES = 1024;

/** The events the database writes with every transition, for finance and admins; redelivery for admins. */
@Injectable()
export class EventsService {
  private readonly currencies: AppConfig['currencies'];
  private readonly reportsTimeZone: string;

  constructor(
    private readonly events: EventsRepository,
    config: ConfigService<AppConfig, true>,
  ) {
    this.currencies = config.get('currencies', { infer: true });
    this.reportsTimeZone = config.get('reportsTimeZone', { infer: true });
  }

  async list(query: ListEventsQueryDto): Promise<EventPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.events.list(
      { type: query.type, resourceId: query.resourceId, ...periodOf(query, this.reportsTimeZone) },
      { limit: limit + 1, after: afterCursor(query.cursor) },
    );
    return toPage(rows, limit, positionOfEvent, (event) => this.toDto(event));
  }

  /** The event with its deliveries; each endpoint's whole URL for an admin, its origin only for finance. */
  async findOne(id: string, user: AuthUser): Promise<EventDetailDto> {
    const detail = EVENT_ID_PATTERN.test(id) ? await this.events.findById(id) : undefined;
    if (!detail) throw new NotFoundError(`No event ${id}.`);
    const wholeUrl = hasRole(user, 'admin');
    return { ...this.toDto(detail.event), deliveries: detail.deliveries.map((d) => toDeliveryDto(d, wholeUrl)) };
  }

  async redeliver(user: AuthUser, id: string, body: RedeliverEventDto): Promise<RedeliveriesDto> {
    if (!EVENT_ID_PATTERN.test(id)) throw new NotFoundError(`No event ${id}.`);
    const endpointId = body.endpointId?.toLowerCase();
    const result = await this.events.redeliver(id, endpointId, (deliveryIds) =>
      auditEventOf(user, 'event.redelivered', { type: 'event', id }, { details: { endpointId: endpointId ?? null, deliveryIds } }),
    );
    switch (result.kind) {
      case 'no_event':
        throw new NotFoundError(`No event ${id}.`);
      case 'no_endpoint':
        throw new NotFoundError(`No webhook endpoint ${endpointId}.`);
      case 'endpoint_disabled':
        throw new ConflictError(
          'webhook_endpoint_disabled',
          `Webhook endpoint ${endpointId} is disabled: enable it before redelivering to it.`,
        );
      case 'redelivered':
        return { deliveries: result.deliveries.map((d) => toDeliveryDto(d, true)) };
    }
  }

  private toDto(event: EventRecord): EventDto {
    return { id: event.id, type: event.type, timestamp: event.createdAt.toISOString(), data: eventData(event, this.currencies) };
  }
}

/** An event's place in the list: its time, and its id in the UUID spelling every cursor carries. */
function positionOfEvent(event: EventRecord): KeysetPosition {
  const hex = EVENT_ID_PATTERN.test(event.id) ? event.id.slice(4) : undefined;
  if (!hex) throw new Error(`event id ${event.id} is not one the events trigger writes`);
  return {
    at: event.createdAt,
    id: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
  };
}

/**
 * A delivery as answered: `endpointUrl` for admins only (`wholeUrl`), `endpointOrigin` for every
 * reader; an attempt's error without the addresses of rows stored before errors were written without
 * them (describeAttemptError does it as they are stored now).
 */
function toDeliveryDto(delivery: WebhookDeliveryRecord, wholeUrl: boolean): WebhookDeliveryDto {
  return {
    id: delivery.id,
    endpointId: delivery.endpointId,
    endpointOrigin: endpointOrigin(delivery.endpointUrl),
    ...(wholeUrl ? { endpointUrl: delivery.endpointUrl } : {}),
    status: delivery.status,
    attemptCount: delivery.attemptCount,
    nextAttemptAt: delivery.nextAttemptAt,
    createdAt: delivery.createdAt,
    completedAt: delivery.completedAt,
    attempts: delivery.attempts.map((attempt) => ({
      at: attempt.at,
      httpStatus: attempt.httpStatus,
      durationMs: attempt.durationMs,
      error: attempt.error === null ? null : withoutAddresses(attempt.error),
      responseBody: attempt.responseBody === null ? null : truncateUtf8(attempt.responseBody, RESPONSE_BODY_BYTES),
    })),
  };
}
