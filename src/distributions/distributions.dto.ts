import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsOptional, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { IsCurrencyCode, IsMoneyAmount, IsPercentageRate } from '../common/money.validator';
import { DISTRIBUTION_KINDS, DISTRIBUTION_STATUSES, type DistributionKind, type DistributionStatus } from './distribution.types';
import { PageDto, PagedPeriodQueryDto } from '../common/pagination';
import { Trim } from '../common/validation';

export const MAX_BENEFICIARIES = 100;
/** Beneficiary rates are percentages with at most two decimals (33.33), as the issue fixes. */
export const DISTRIBUTION_RATE_DECIMALS = 2;

export class DistributionEntryDto {
  @ApiProperty({ example: 'MAT48213307', description: 'Matricule of a linked wallet user (POST /v1/wallet-links answers it)' })
  @Trim()
  @IsString()
  @Matches(/^[A-Za-z0-9_.:-]{1,64}$/, { message: 'matricule must be 1 to 64 letters, digits or _ . : -' })
  matricule: string;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'number' }],
    example: '33.33',
    description:
      'Percentage of the amount for this beneficiary: greater than 0, at most 2 decimals; the rates of a list sum to at most 100',
  })
  @IsPercentageRate(DISTRIBUTION_RATE_DECIMALS)
  rate: string | number;
}

/** What both kinds share: the amount, its currency and the beneficiaries. */
abstract class DistributionRequestDto {
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'number' }],
    example: '10000',
    description:
      'Positive decimal, as a string or a number, with no more decimals than the currency allows (XAF: none; EUR: 2). Never rounded; sent to the provider as an exact JSON number.',
  })
  @IsMoneyAmount()
  amount: string | number;

  @ApiProperty({
    example: 'XAF',
    description: 'ISO 4217 code among the accepted currencies (CURRENCIES); gives the minor units of the shares',
  })
  @IsCurrencyCode()
  currency: string;

  @ApiProperty({
    type: [DistributionEntryDto],
    description: `1 to ${MAX_BENEFICIARIES} beneficiaries, each matricule once, rates summing to at most 100`,
    example: [
      { matricule: 'MAT48213307', rate: '33.33' },
      { matricule: 'MAT90117254', rate: '33.33' },
      { matricule: 'MAT11002233', rate: '33.34' },
    ],
  })
  @IsArray()
  @ArrayMinSize(1, { message: 'distribution must list at least one beneficiary' })
  @ArrayMaxSize(MAX_BENEFICIARIES)
  @ValidateNested({ each: true })
  @Type(() => DistributionEntryDto)
  distribution: DistributionEntryDto[];
}

export class CreateInitDistributionDto extends DistributionRequestDto {
  @ApiProperty({
    example: 'MAT48213307',
    description: 'Identifier of the main payment receiver (sent as payment_receiver); gets what the shares leave',
  })
  @Trim()
  @IsString()
  @Length(1, 100)
  paymentReceiver: string;

  @ApiProperty({
    example: 'pay_2026_000123',
    description: 'Unique identifier of the payment (sent as payment_id); a second distribution with it is 409',
  })
  @Trim()
  @IsString()
  @Matches(/^[A-Za-z0-9_.:-]{1,100}$/, { message: 'paymentId must be 1 to 100 letters, digits or _ . : -' })
  paymentId: string;
}

export class CreateFiatDistributionDto extends DistributionRequestDto {
  @ApiProperty({ example: 'Awa Ndiaye', description: 'Who paid the fiat payment received outside the provider' })
  @Trim()
  @IsString()
  @Length(1, 120)
  payer: string;
}

export class DistributionShareDto {
  @ApiProperty({ example: 1, description: 'Position in the list as sent' })
  position: number;

  @ApiProperty({ example: 'MAT48213307' })
  matricule: string;

  @ApiProperty({ example: '33.33', description: 'Percentage, decimal string' })
  rate: string;

  @ApiProperty({
    example: '3333',
    description: 'This beneficiary’s share, decimal string in the currency (largest remainder, never rounded up beyond the amount)',
  })
  share: string;
}

export class DistributionDto {
  @ApiProperty({ example: '5f4e3d2c-1b0a-4988-8776-655443322110', format: 'uuid' })
  id: string;

  @ApiProperty({
    enum: DISTRIBUTION_KINDS,
    description: '`init`: a transaction prepared for redistribution; `fiat`: a fiat payment redistributed',
  })
  kind: DistributionKind;

  @ApiProperty({
    enum: DISTRIBUTION_STATUSES,
    example: 'ACCEPTED',
    description:
      'PENDING (stored, no answer yet), ACCEPTED, REJECTED (refused by the provider, see failureReason), UNKNOWN (the answer was lost: it may have happened; never resent automatically)',
  })
  status: DistributionStatus;

  @ApiProperty({ nullable: true, type: String, example: 'MAT48213307', description: 'init only' })
  paymentReceiver: string | null;

  @ApiProperty({ nullable: true, type: String, example: 'pay_2026_000123', description: 'init only' })
  paymentId: string | null;

  @ApiProperty({ nullable: true, type: String, example: null, description: 'fiat only' })
  payer: string | null;

  @ApiProperty({ example: '10000', description: 'Decimal string with the currency’s minor units' })
  amount: string;

  @ApiProperty({ example: 'XAF' })
  currency: string;

  @ApiProperty({ type: [DistributionShareDto] })
  distribution: DistributionShareDto[];

  @ApiProperty({
    example: '0',
    description: 'amount minus the shares: the payment receiver’s part (init), or what no beneficiary gets (fiat)',
  })
  remainder: string;

  @ApiProperty({
    nullable: true,
    type: String,
    example: 'Transaction initialised successfully',
    description: 'The provider’s message, when it answered',
  })
  providerMessage: string | null;

  @ApiProperty({ nullable: true, type: String, example: null })
  failureReason: string | null;

  @ApiProperty({ example: 'admin_1', description: 'The admin who asked (token `sub`)' })
  createdBy: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:00.000Z' })
  createdAt: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-23T09:15:04.000Z',
    nullable: true,
    type: String,
    description: 'When the provider’s answer (or its loss) was recorded',
  })
  completedAt: string | null;
}

export class DistributionPageDto extends PageDto {
  @ApiProperty({ type: [DistributionDto] })
  items: DistributionDto[];
}

export class ListDistributionsQueryDto extends PagedPeriodQueryDto {
  @ApiPropertyOptional({ enum: DISTRIBUTION_KINDS })
  @IsOptional()
  @IsIn(DISTRIBUTION_KINDS)
  kind?: DistributionKind;

  @ApiPropertyOptional({ enum: DISTRIBUTION_STATUSES })
  @IsOptional()
  @IsIn(DISTRIBUTION_STATUSES)
  status?: DistributionStatus;
}
