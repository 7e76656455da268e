import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsOptional } from 'class-validator';
import { ORDER_STATUSES } from '../orders/order.types';

export class SummaryQueryDto {
  @ApiPropertyOptional({ description: 'Orders created at or after (ISO 8601, e.g. 2026-11-01T00:00:00Z)' })
  @IsOptional()
  @IsISO8601({ strict: true })
  from?: string;

  @ApiPropertyOptional({ description: 'Orders created before (ISO 8601)' })
  @IsOptional()
  @IsISO8601({ strict: true })
  to?: string;
}

export class SummaryLineDto {
  @ApiProperty({ enum: ORDER_STATUSES, example: 'SUCCEEDED' })
  status: string;

  @ApiProperty({ example: 'XAF' })
  currency: string;

  @ApiProperty({ example: 42 })
  count: number;

  @ApiProperty({ example: '630000', description: 'Exact total, decimal string with the currency’s minor units' })
  total: string;
}

export class SummaryDto {
  @ApiProperty({ nullable: true, type: String })
  from: string | null;

  @ApiProperty({ nullable: true, type: String })
  to: string | null;

  @ApiProperty({ type: [SummaryLineDto] })
  lines: SummaryLineDto[];
}
