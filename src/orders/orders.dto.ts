import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { PageDto, PageQueryDto, PeriodQueryDto } from '../common/pagination';
import { Transform } from 'class-transformer';
import { IsBoolean, IsEmail, IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, MaxLength, Min } from 'class-validator';
import { IsCurrencyCode, IsMoneyAmount } from '../common/money.validator';
import { ORDER_STATUSES, type OrderStatus } from './order.types';
import { Trim } from '../common/validation';

export class CreateOrderDto {
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'number' }],
    example: '1500',
    description:
      'Positive decimal, as a string or a number, with no more decimals than the currency allows (XAF and XOF: none; EUR and USD: 2). Never rounded.',
  })
  @IsMoneyAmount()
  amount: string | number;

  @ApiProperty({ example: 'XAF', description: 'ISO 4217 code among the accepted currencies (CURRENCIES)' })
  @IsCurrencyCode()
  currency: string;

  @ApiProperty({
    example: '237600000001',
    description: "The customer's mobile wallet (digits). In the sandbox, the wallet chooses the outcome.",
  })
  @Trim()
  @IsString()
  @Matches(/^\d{6,20}$/, { message: 'wallet must be 6 to 20 digits' })
  wallet: string;

  @ApiProperty({ example: 1, description: "The provider's integer service code (sent as the `service` header)" })
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  service: number;

  @ApiProperty({ example: 'Order #1042: 2 tickets', maxLength: 255 })
  @Trim()
  @IsString()
  @Length(1, 255)
  description: string;

  @ApiProperty({ example: 'Awa Ndiaye', maxLength: 120 })
  @Trim()
  @IsString()
  @Length(1, 120)
  payer: string;

  @ApiProperty({ example: 'awa@example.com' })
  @Trim()
  @IsEmail({}, { message: 'payerEmail must be an email address' })
  @MaxLength(254)
  payerEmail: string;

  @ApiPropertyOptional({
    example: '123456',
    description: 'One-time code some mobile-money operators require; forwarded as the `otp` header, never stored.',
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'number' && Number.isInteger(value) ? String(value) : value))
  @IsString()
  @Matches(/^\d{4,8}$/, { message: 'otp must be 4 to 8 digits' })
  otp?: string;
}

export class OrderDto {
  @ApiProperty({ example: '8d3e5f0a-1b2c-4d6e-9f70-a1b2c3d4e5f6', format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'ord_3f1c0b6e2a9d4c7b8e5f6a1b2c3d4e5f', description: 'Sent to the provider as order_id; unique, never reused' })
  reference: string;

  @ApiProperty({ enum: ORDER_STATUSES, example: 'PROCESSING' })
  status: OrderStatus;

  @ApiProperty({ example: '1500', description: 'Decimal string with the currency’s minor units' })
  amount: string;

  @ApiProperty({ example: 'XAF' })
  currency: string;

  @ApiProperty({ example: 1 })
  service: number;

  @ApiProperty({ example: '237600000001' })
  wallet: string;

  @ApiProperty({ example: 'Order #1042: 2 tickets' })
  description: string;

  @ApiProperty({ example: 'Awa Ndiaye' })
  payer: string;

  @ApiProperty({ example: 'awa@example.com' })
  payerEmail: string;

  @ApiProperty({ nullable: true, type: String, example: 'SP35245212801583' })
  providerReference: string | null;

  @ApiProperty({ example: 'TR2611230915A1', nullable: true, type: String })
  providerTransactionReference: string | null;

  @ApiProperty({ nullable: true, type: String, example: null })
  failureReason: string | null;

  @ApiProperty({ description: 'A callback contradicted a final status: finance must look at this order' })
  needsReview: boolean;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:04.000Z' })
  updatedAt: string;
}

export class OrderStatusChangeDto {
  @ApiProperty({ enum: ORDER_STATUSES, nullable: true })
  fromStatus: OrderStatus | null;

  @ApiProperty({ enum: ORDER_STATUSES })
  status: OrderStatus;

  @ApiProperty({
    example: 'provider_accepted',
    description:
      'created, provider_accepted, provider_rejected, provider_outcome_unknown, callback_success, callback_failure, expired, submission_interrupted, manual_resolution, review_cleared',
  })
  reason: string;

  @ApiProperty({ example: 'Accepted by the provider, waiting for its callback', nullable: true, type: String })
  detail: string | null;

  @ApiProperty({ example: 'c5a1e7b2-9d40-4f3a-8b6c-2e1d0f9a8b7c', nullable: true, type: String, format: 'uuid' })
  callbackId: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'Who decided a manual_resolution or review_cleared (token `sub`); shown to finance and admin only',
  })
  actor: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'The note of a manual_resolution or review_cleared; shown to finance and admin only',
  })
  note: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:04.000Z' })
  at: string;
}

export class OrderCallbackSummaryDto {
  @ApiProperty({ example: 'c5a1e7b2-9d40-4f3a-8b6c-2e1d0f9a8b7c', format: 'uuid' })
  id: string;

  @ApiProperty({ enum: ['success', 'failure'] })
  outcome: string;

  @ApiProperty({ enum: ['APPLIED', 'DUPLICATE', 'CONFLICT', 'REJECTED'] })
  result: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:16:30.000Z' })
  receivedAt: string;
}

export class OrderDetailDto extends OrderDto {
  @ApiProperty({ type: [OrderStatusChangeDto] })
  history: OrderStatusChangeDto[];

  @ApiProperty({ type: [OrderCallbackSummaryDto] })
  callbacks: OrderCallbackSummaryDto[];
}

export class OrderPageDto extends PageDto {
  @ApiProperty({ type: [OrderDto] })
  items: OrderDto[];
}

export class OrderFilterQueryDto extends PeriodQueryDto {
  @ApiPropertyOptional({ enum: ORDER_STATUSES })
  @IsOptional()
  @IsIn(ORDER_STATUSES)
  status?: OrderStatus;

  @ApiPropertyOptional({ description: 'ISO 4217 code, e.g. XAF' })
  @IsOptional()
  @IsCurrencyCode()
  currency?: string;

  @ApiPropertyOptional({ description: 'Only orders a contradicting callback flagged for review (true) or the others (false)' })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  needsReview?: boolean;
}

export class ListOrdersQueryDto extends IntersectionType(OrderFilterQueryDto, PageQueryDto) {}

export class ExportOrdersQueryDto extends OrderFilterQueryDto {
  @ApiPropertyOptional({
    default: true,
    description:
      'Start the file with a UTF-8 byte order mark, so that Excel reads accented names right (the default); `false` leaves it out',
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  bom?: boolean;
}

export class OrderStatusEventDto {
  @ApiProperty({ example: '8d3e5f0a-1b2c-4d6e-9f70-a1b2c3d4e5f6', format: 'uuid' })
  orderId: string;

  @ApiProperty({ enum: ORDER_STATUSES })
  status: OrderStatus;

  @ApiProperty({ enum: ORDER_STATUSES, nullable: true })
  fromStatus: OrderStatus | null;

  @ApiProperty({ example: 'callback_success' })
  reason: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:16:30.000Z' })
  at: string;
}
