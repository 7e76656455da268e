import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, MaxLength, ValidateIf, type ValidationArguments } from 'class-validator';
import { PageDto, PageQueryDto } from '../common/pagination';
import { Trim } from '../common/validation';
import { WEBHOOK_URL_MAX_LENGTH } from './webhook-url-policy';
import { WEBHOOK_ENDPOINT_STATUSES, WEBHOOK_EVENT_TYPES, type WebhookEndpointStatus } from './webhook-endpoints.types';

const DESCRIPTION_MAX_LENGTH = 500;

/** Names the entries that are not event types (class-validator's own message lists only the allowed values). */
function unknownEventTypes(args: ValidationArguments): string {
  const given: unknown[] = Array.isArray(args.value) ? (args.value as unknown[]) : [args.value];
  const unknown = given
    .map((value, index) => ({ value, index }))
    .filter(({ value }) => !(WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(value))
    .map(({ value, index }) => `events[${index}] ${typeof value === 'string' ? JSON.stringify(value.slice(0, 60)) : 'is not a string'}`);
  return `events holds unknown event types (${unknown.slice(0, 5).join(', ')}); known: ${WEBHOOK_EVENT_TYPES.join(', ')}`;
}

const URL_PROPERTY = {
  example: 'https://merchant.example.com/hooks/payments',
  maxLength: WEBHOOK_URL_MAX_LENGTH,
  description:
    'Where events are POSTed: an absolute `https://` URL without credentials, whose host resolves only to public addresses (no loopback, private, link-local or cloud-metadata address); `http://` and private addresses only where WEBHOOK_ALLOW_INSECURE_URLS / WEBHOOK_ALLOW_PRIVATE_URLS allow (outside production). Refused: 400 `webhook_url_not_allowed`.',
};
const EVENTS_PROPERTY = {
  enum: WEBHOOK_EVENT_TYPES,
  isArray: true,
  example: ['order.succeeded', 'order.failed'],
  maxItems: WEBHOOK_EVENT_TYPES.length,
  description: 'The event types to receive. Empty or absent: every type, including types added later.',
};
const DESCRIPTION_PROPERTY = { example: 'ERP payments listener', maxLength: DESCRIPTION_MAX_LENGTH };

/**
 * The `events` of an endpoint, on creation and change alike: when sent, a list of known event
 * types. The decorators are given in the order a stack of them above the property applies them
 * (the lowest first), so that validation reports as it did with the stack.
 */
function EventTypesProperty(): PropertyDecorator {
  return applyDecorators(
    IsIn(WEBHOOK_EVENT_TYPES, { each: true, message: unknownEventTypes }),
    ArrayMaxSize(WEBHOOK_EVENT_TYPES.length),
    IsArray(),
    ValidateIf((body: { events?: unknown }) => body.events !== undefined),
    ApiPropertyOptional(EVENTS_PROPERTY),
  );
}

export class CreateWebhookEndpointDto {
  @ApiProperty(URL_PROPERTY)
  @Trim()
  @IsString()
  @MaxLength(WEBHOOK_URL_MAX_LENGTH)
  url: string;

  @EventTypesProperty()
  events?: string[];

  @ApiPropertyOptional(DESCRIPTION_PROPERTY)
  @IsOptional()
  @Trim()
  @IsString()
  @MaxLength(DESCRIPTION_MAX_LENGTH)
  description?: string;
}

export class UpdateWebhookEndpointDto {
  @ApiPropertyOptional(URL_PROPERTY)
  @ValidateIf((body: { url?: unknown }) => body.url !== undefined)
  @Trim()
  @IsString()
  @MaxLength(WEBHOOK_URL_MAX_LENGTH)
  url?: string;

  @EventTypesProperty()
  events?: string[];

  @ApiPropertyOptional({ ...DESCRIPTION_PROPERTY, type: String, nullable: true, description: '`null` removes it' })
  @IsOptional()
  @Trim()
  @IsString()
  @MaxLength(DESCRIPTION_MAX_LENGTH)
  description?: string | null;

  @ApiPropertyOptional({
    enum: WEBHOOK_ENDPOINT_STATUSES,
    example: 'DISABLED',
    description: 'A DISABLED endpoint receives no new deliveries; ENABLED again, it receives the events written from then on.',
  })
  @ValidateIf((body: { status?: unknown }) => body.status !== undefined)
  @IsIn(WEBHOOK_ENDPOINT_STATUSES)
  status?: WebhookEndpointStatus;
}

export class WebhookEndpointDto {
  @ApiProperty({ example: '0b5e7c1a-3f2d-4e6b-9a8c-1d2e3f4a5b6c', format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'https://merchant.example.com/hooks/payments' })
  url: string;

  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, isArray: true, example: ['order.succeeded', 'order.failed'], description: 'Empty: every type' })
  events: string[];

  @ApiProperty({ type: String, nullable: true, example: 'ERP payments listener' })
  description: string | null;

  @ApiProperty({ enum: WEBHOOK_ENDPOINT_STATUSES, example: 'ENABLED' })
  status: WebhookEndpointStatus;

  @ApiProperty({ type: String, nullable: true, example: null, description: 'Why the endpoint is DISABLED; null while ENABLED' })
  disabledReason: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-26T10:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-26T10:00:00.000Z' })
  updatedAt: string;
}

export class CreatedWebhookEndpointDto extends WebhookEndpointDto {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3Xp4oVOmkyE=',
    description:
      'The signing secret (Standard Webhooks: `whsec_` + base64 of 32 random bytes). Shown in this answer only: keep it, it cannot be read again (rotate it to get a new one).',
  })
  secret: string;
}

export class WebhookEndpointSecretDto {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3Xp4oVOmkyE=',
    description:
      'The new signing secret, shown in this answer only. For 24 hours every delivery is signed with it and with the previous one.',
  })
  secret: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-27T10:00:00.000Z', description: 'Until when the previous secret also signs' })
  previousSecretUntil: string;
}

export class WebhookEndpointPageDto extends PageDto {
  @ApiProperty({ type: [WebhookEndpointDto] })
  items: WebhookEndpointDto[];
}

export class ListWebhookEndpointsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: WEBHOOK_ENDPOINT_STATUSES })
  @IsOptional()
  @IsIn(WEBHOOK_ENDPOINT_STATUSES)
  status?: WebhookEndpointStatus;
}
