import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { PageDto, PagedPeriodQueryDto } from '../common/pagination';

export const CALLBACK_RESULTS = ['APPLIED', 'DUPLICATE', 'CONFLICT', 'REJECTED'] as const;

export class CallbackAckDto {
  @ApiProperty({ example: 'received' })
  status: 'received';

  @ApiProperty({ format: 'uuid' })
  callbackId: string;
}

export class CallbackRecordDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'null when the URL named no order or its token was wrong' })
  orderId: string | null;

  @ApiProperty({ description: 'Order id as it appeared in the URL' })
  pathOrderId: string;

  @ApiProperty({ example: 'success' })
  outcome: string;

  @ApiProperty({ enum: CALLBACK_RESULTS })
  result: string;

  @ApiProperty({ example: 'POST' })
  method: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Query parameters; the token and every secret-like name redacted. Values cut to 256 characters (at most 32 members) when REJECTED' })
  query: unknown;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Headers without secrets. Values cut to 256 characters (at most 32 members) when REJECTED' })
  headers: unknown;

  @ApiProperty({ nullable: true, type: String })
  contentType: string | null;

  @ApiProperty({ nullable: true, type: String, description: 'The body as received, as text (never parsed): its first 64 KiB, or 1 KiB when REJECTED. NUL characters are kept as U+FFFD' })
  rawBody: string | null;

  @ApiProperty({ nullable: true, type: String })
  remoteIp: string | null;

  @ApiProperty({ nullable: true, type: String })
  requestId: string | null;

  @ApiProperty()
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
