import { ApiProperty } from '@nestjs/swagger';
import { PeriodQueryDto } from '../common/pagination';
import { ORDER_STATUSES } from '../orders/order.types';

export class SummaryQueryDto extends PeriodQueryDto {}

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
