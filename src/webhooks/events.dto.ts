import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsIn, IsOptional, Matches } from 'class-validator';
import { PageDto, PageQueryDto, PeriodQueryDto, UUID_PATTERN } from '../common/pagination';
import { EVENT_TYPES, type EventType } from './event-body';
import { WEBHOOK_DELIVERY_STATUSES, type WebhookDeliveryStatus } from './events.types';

export class EventFilterQueryDto extends PeriodQueryDto {
  @ApiPropertyOptional({ enum: EVENT_TYPES, example: 'order.succeeded', description: 'Only events of this type' })
  @IsOptional()
  @IsIn(EVENT_TYPES)
  type?: EventType;

  @ApiPropertyOptional({
    example: '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f',
    format: 'uuid',
    description: 'Only the events of this order, card operation or distribution',
  })
  @IsOptional()
  @Matches(UUID_PATTERN, { message: 'resourceId must be a UUID' })
  resourceId?: string;
}

export class ListEventsQueryDto extends IntersectionType(EventFilterQueryDto, PageQueryDto) {}

/** An order event's `data`, as documented; event-body.spec.ts renders it from a stored snapshot. */
export const ORDER_EVENT_DATA_EXAMPLE = {
  id: '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f',
  reference: 'INV-2026-0042',
  status: 'SUCCEEDED',
  amount: '1500',
  currency: 'XAF',
  service: 1,
  wallet: '237670000000',
  description: 'Invoice 42',
  payer: 'Jane Doe',
  payerEmail: 'jane@example.com',
  providerReference: 'PRV-8812',
  providerTransactionReference: 'TX-19',
  failureReason: null,
  needsReview: false,
  createdAt: '2026-11-26T18:49:40.000Z',
  updatedAt: '2026-11-26T18:49:47.123Z',
  previousStatus: 'PROCESSING',
};

/** An event, as listed, shown and delivered to webhook endpoints. */
export class EventDto {
  @ApiProperty({
    example: 'evt_3f2b1c0d9e8f4a5b8c7d6e5f4a3b2c1d',
    pattern: '^evt_[0-9a-f]{32}$',
    description: 'Unique; the same in every delivery',
  })
  id: string;

  @ApiProperty({ enum: EVENT_TYPES, example: 'order.succeeded' })
  type: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-26T18:49:47.123Z',
    description: 'When the transition happened (it commits with its event)',
  })
  timestamp: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: ORDER_EVENT_DATA_EXAMPLE,
    description:
      'The resource as its GET answered right after the transition (an order as GET /v1/orders/{id}, a card operation as GET /v1/card-operations/{id}, a distribution as GET /v1/distributions/{id}), plus `previousStatus` (null for a resource stored already decided)',
  })
  data: Record<string, unknown>;
}

export class EventPageDto extends PageDto {
  @ApiProperty({ type: [EventDto] })
  items: EventDto[];
}

export class WebhookAttemptDto {
  @ApiProperty({ format: 'date-time', example: '2026-11-26T18:49:48.020Z' })
  at: string;

  @ApiProperty({
    nullable: true,
    type: Number,
    example: 200,
    description: "The endpoint's HTTP status; null when no answer came (timeout, refused connection)",
  })
  httpStatus: number | null;

  @ApiProperty({ example: 87 })
  durationMs: number;

  @ApiProperty({
    nullable: true,
    type: String,
    example: 'ECONNREFUSED: the connection was refused',
    description:
      "What went wrong, when something did: `HTTP 500`, `timeout: …`, `URL refused: …`, a connection error's code and meaning; never an address the endpoint's host resolved to",
  })
  error: string | null;

  @ApiProperty({ nullable: true, type: String, example: '{"received":true}', description: 'The first 1 KiB of the answer' })
  responseBody: string | null;
}

export class WebhookDeliveryDto {
  @ApiProperty({ example: '0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e', format: 'uuid' })
  id: string;

  @ApiProperty({ example: '5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9', format: 'uuid' })
  endpointId: string;

  @ApiProperty({
    example: 'https://merchant.example.com',
    description: "The endpoint's origin: scheme, host and port (the port only when it is not the scheme's own)",
  })
  endpointOrigin: string;

  @ApiPropertyOptional({
    example: 'https://merchant.example.com/webhooks/payments',
    description:
      "The endpoint's whole URL, for admins only (absent for finance): its path or query often carry the receiver's own credentials",
  })
  endpointUrl?: string;

  @ApiProperty({
    enum: WEBHOOK_DELIVERY_STATUSES,
    example: 'DELIVERED',
    description: 'PENDING (to be attempted at nextAttemptAt), DELIVERED (a 2xx answer), FAILED (out of retries)',
  })
  status: WebhookDeliveryStatus;

  @ApiProperty({ example: 1 })
  attemptCount: number;

  @ApiProperty({ format: 'date-time', example: '2026-11-26T18:49:47.123Z', description: 'When it is (or was last) due' })
  nextAttemptAt: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-26T18:49:47.123Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: '2026-11-26T18:49:48.107Z' })
  completedAt: string | null;

  @ApiProperty({ type: [WebhookAttemptDto], description: 'Every attempt, oldest first' })
  attempts: WebhookAttemptDto[];
}

export class EventDetailDto extends EventDto {
  @ApiProperty({
    type: [WebhookDeliveryDto],
    description: 'Its deliveries, oldest first: one per endpoint subscribed when it happened, and one per redelivery',
  })
  deliveries: WebhookDeliveryDto[];
}

export class RedeliverEventDto {
  @ApiPropertyOptional({
    example: '5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9',
    format: 'uuid',
    description:
      'Deliver to this endpoint only (it must be ENABLED; subscribed to the type or not); without it, to every ENABLED endpoint subscribed to the type',
  })
  @IsOptional()
  @Matches(UUID_PATTERN, { message: 'endpointId must be a UUID' })
  endpointId?: string;
}

export class RedeliveriesDto {
  @ApiProperty({
    type: [WebhookDeliveryDto],
    description: 'The deliveries created, PENDING and due now (none when no endpoint is subscribed)',
  })
  deliveries: WebhookDeliveryDto[];
}
