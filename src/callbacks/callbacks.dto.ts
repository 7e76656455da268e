import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { PageDto, PagedPeriodQueryDto } from '../common/pagination';
import { CALLBACK_RESULTS } from './callback.types';

export { CALLBACK_RESULTS } from './callback.types';

export class CallbackAckDto {
  @ApiProperty({ example: 'received' })
  status: 'received';

  @ApiProperty({ example: 'c5a1e7b2-9d40-4f3a-8b6c-2e1d0f9a8b7c', format: 'uuid' })
  callbackId: string;
}

export class CallbackRecordDto {
  @ApiProperty({ example: 'c5a1e7b2-9d40-4f3a-8b6c-2e1d0f9a8b7c', format: 'uuid' })
  id: string;

  @ApiProperty({
    example: '8d3e5f0a-1b2c-4d6e-9f70-a1b2c3d4e5f6',
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'null when the URL named no order or its token was wrong',
  })
  orderId: string | null;

  @ApiProperty({ example: '8d3e5f0a-1b2c-4d6e-9f70-a1b2c3d4e5f6', description: 'Order id as it appeared in the URL' })
  pathOrderId: string;

  @ApiProperty({ example: 'success' })
  outcome: string;

  @ApiProperty({ enum: CALLBACK_RESULTS })
  result: string;

  @ApiProperty({ example: 'POST' })
  method: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'Query parameters; the token and every secret-like name redacted. Values cut to 256 characters (at most 32 members) when REJECTED',
  })
  query: unknown;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Headers without secrets. Values cut to 256 characters (at most 32 members) when REJECTED',
  })
  headers: unknown;

  @ApiProperty({ example: 'application/json', nullable: true, type: String })
  contentType: string | null;

  @ApiProperty({
    example: '{"status":"SUCCESS","order_id":"ord_3f1c0b6e2a9d4c7b8e5f6a1b2c3d4e5f"}',
    nullable: true,
    type: String,
    description:
      'The body as received, as text (never parsed): its first 64 KiB, or 1 KiB when REJECTED. NUL characters are kept as U+FFFD',
  })
  rawBody: string | null;

  @ApiProperty({ example: '203.0.113.7', nullable: true, type: String })
  remoteIp: string | null;

  @ApiProperty({ example: '4f0c8a2e-6d7b-4c55-9a5e-2c1d0e9b7a11', nullable: true, type: String })
  requestId: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:16:30.000Z' })
  receivedAt: string;
}

export class CallbackPageDto extends PageDto {
  @ApiProperty({ type: [CallbackRecordDto] })
  items: CallbackRecordDto[];
}

export class ListCallbacksQueryDto extends PagedPeriodQueryDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  orderId?: string;

  @ApiPropertyOptional({ enum: ['success', 'failure'], description: 'Which URL the provider called' })
  @IsOptional()
  @IsIn(['success', 'failure'])
  outcome?: 'success' | 'failure';

  @ApiPropertyOptional({ enum: CALLBACK_RESULTS })
  @IsOptional()
  @IsIn(CALLBACK_RESULTS)
  result?: (typeof CALLBACK_RESULTS)[number];
}
