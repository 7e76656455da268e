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
  @ApiProperty({
    format: 'date-time',
    example: '2026-11-01T00:00:00.000Z',
    nullable: true,
    type: String,
    description: 'The first moment counted: `from` as an instant (a day starts at its midnight in REPORTS_TIMEZONE)',
  })
  from: string | null;

  @ApiProperty({
    format: 'date-time',
    example: '2026-12-01T00:00:00.000Z',
    nullable: true,
    type: String,
    description: 'The first moment no longer counted: `to` as an instant (for a day, the next midnight in REPORTS_TIMEZONE)',
  })
  to: string | null;

  @ApiProperty({ type: [SummaryLineDto] })
  lines: SummaryLineDto[];
}

export class AttentionOrderDto {
  @ApiProperty({ example: '8d3e5f0a-1b2c-4d6e-9f70-a1b2c3d4e5f6', format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'ord_3f1c0b6e2a9d4c7b8e5f6a1b2c3d4e5f' })
  reference: string;

  @ApiProperty({ enum: ORDER_STATUSES, example: 'UNKNOWN' })
  status: string;

  @ApiProperty({ example: '1500' })
  amount: string;

  @ApiProperty({ example: 'XAF' })
  currency: string;

  @ApiProperty({ example: false })
  needsReview: boolean;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:01.000Z' })
  updatedAt: string;
}

export class AttentionCardOperationDto {
  @ApiProperty({ example: '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d', format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'TOPUP' })
  kind: string;

  @ApiProperty({ example: '4e8a1c2d-7f3b-4a69-9c05-b1d2e3f4a5b6', format: 'uuid', nullable: true, type: String })
  cardId: string | null;

  @ApiProperty({ example: '2b7e9c41-6a3d-4f18-b5e2-0c9d8a7f6e51', format: 'uuid' })
  cardUserId: string;

  @ApiProperty({ nullable: true, type: String, example: '2500' })
  amount: string | null;

  @ApiProperty({ nullable: true, type: String, example: 'XAF' })
  currency: string | null;

  @ApiProperty({ nullable: true, type: String, example: 'The provider did not answer within 15000 ms' })
  failureReason: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:00.000Z' })
  createdAt: string;
}

export class AttentionDistributionDto {
  @ApiProperty({ example: '5f4e3d2c-1b0a-4988-8776-655443322110', format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['init', 'fiat'], example: 'init' })
  kind: string;

  @ApiProperty({ example: '10000' })
  amount: string;

  @ApiProperty({ example: 'XAF' })
  currency: string;

  @ApiProperty({ example: 'The provider did not answer in time', nullable: true, type: String })
  failureReason: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:00.000Z' })
  createdAt: string;
}

export class AttentionOrderQueueDto {
  @ApiProperty({ example: 3, description: 'How many wait' })
  count: number;

  @ApiProperty({ type: [AttentionOrderDto], description: 'The oldest of them (at most 20), oldest first' })
  oldest: AttentionOrderDto[];
}

export class AttentionCardOperationQueueDto {
  @ApiProperty({ example: 1 })
  count: number;

  @ApiProperty({ type: [AttentionCardOperationDto], description: 'The oldest (at most 20), oldest first' })
  oldest: AttentionCardOperationDto[];
}

export class AttentionDistributionQueueDto {
  @ApiProperty({ example: 0 })
  count: number;

  @ApiProperty({ type: [AttentionDistributionDto], description: 'The oldest (at most 20), oldest first' })
  oldest: AttentionDistributionDto[];
}

export class AttentionOrdersDto {
  @ApiProperty({
    type: AttentionOrderQueueDto,
    description: 'The provider’s answer was lost: resolve with POST /v1/orders/{id}/resolution',
  })
  unknown: AttentionOrderQueueDto;

  @ApiProperty({ type: AttentionOrderQueueDto, description: 'No callback in time: resolve with POST /v1/orders/{id}/resolution' })
  expired: AttentionOrderQueueDto;

  @ApiProperty({
    type: AttentionOrderQueueDto,
    description: 'PENDING for longer than the interrupted-work window (never handed over, or its process died)',
  })
  stalePending: AttentionOrderQueueDto;

  @ApiProperty({
    type: AttentionOrderQueueDto,
    description: 'A callback contradicted a final status: look, then POST /v1/orders/{id}/review',
  })
  needsReview: AttentionOrderQueueDto;
}

export class AttentionCardOperationsDto {
  @ApiProperty({ type: AttentionCardOperationQueueDto, description: 'Resolve with POST /v1/card-operations/{id}/resolution' })
  unknown: AttentionCardOperationQueueDto;
}

export class AttentionDistributionsDto {
  @ApiProperty({ type: AttentionDistributionQueueDto, description: 'Resolve with POST /v1/distributions/{id}/resolution' })
  unknown: AttentionDistributionQueueDto;
}

export class AttentionReportDto {
  @ApiProperty({ format: 'date-time', example: '2026-11-23T12:00:00.000Z' })
  generatedAt: string;

  @ApiProperty({ example: 90, description: 'A PENDING order older than this is stale (the interrupted-work window)' })
  stalePendingAfterSeconds: number;

  @ApiProperty({ type: AttentionOrdersDto })
  orders: AttentionOrdersDto;

  @ApiProperty({ type: AttentionCardOperationsDto })
  cardOperations: AttentionCardOperationsDto;

  @ApiProperty({ type: AttentionDistributionsDto })
  distributions: AttentionDistributionsDto;
}
