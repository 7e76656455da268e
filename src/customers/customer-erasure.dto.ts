import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { Trim } from '../common/validation';
import { ERASURE_STATUSES } from './customer-erasure.types';

export class RequestErasureDto {
  @ApiProperty({
    example: 'Request by email of 2026-11-27, ticket DPO-1432',
    description: 'Why (the request it answers); kept with the erasure. Write no personal value in it.',
  })
  @Trim()
  @IsString()
  @Length(1, 500)
  note: string;
}

export class ErasureDto {
  @ApiProperty({ example: '6f1c8a52-2f5e-4d8e-9b7a-0e3c1d2b4a59' })
  id: string;

  @ApiProperty({ example: 'customer-42', description: "The customer's subject (the token's `sub`)" })
  subject: string;

  @ApiProperty({ enum: ERASURE_STATUSES, example: 'DONE', description: 'PENDING (being worked through) or DONE' })
  status: string;

  @ApiProperty({ example: 'admin-7', description: 'Who asked for it' })
  requestedBy: string;

  @ApiProperty({ example: 'Request by email of 2026-11-27, ticket DPO-1432' })
  note: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    nullable: true,
    example: { orders: 3, card_users: 1, wallet_links: 1, events: 9, provider_calls: 7, idempotency_records: 2 },
    description: 'Rows whose personal values were replaced, per table; null while PENDING',
  })
  counts: Record<string, number> | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-28T12:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: '2026-11-28T12:00:02.000Z' })
  completedAt: string | null;
}
