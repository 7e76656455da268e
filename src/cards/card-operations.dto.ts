import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageDto, PageQueryDto } from '../common/pagination';
import {
  CARD_OPERATION_KINDS,
  CARD_OPERATION_STATUSES,
  CARD_STATUSES,
  type CardOperationKind,
  type CardOperationStatus,
  type CardStatus,
} from './card.types';

export class CardOperationDto {
  @ApiProperty({ example: '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d', format: 'uuid' })
  operationId: string;

  @ApiProperty({ enum: CARD_OPERATION_KINDS, example: 'TOPUP' })
  kind: CardOperationKind;

  @ApiProperty({
    enum: CARD_OPERATION_STATUSES,
    example: 'SUCCEEDED',
    description:
      'PENDING (the provider is being asked), SUCCEEDED, FAILED (refused, or never sent: see failureReason), UNKNOWN (the answer was lost: the provider may have acted)',
  })
  status: CardOperationStatus;

  @ApiProperty({ example: '2b7e9c41-6a3d-4f18-b5e2-0c9d8a7f6e51', format: 'uuid' })
  cardUserId: string;

  @ApiProperty({
    example: '4e8a1c2d-7f3b-4a69-9c05-b1d2e3f4a5b6',
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'Null for a card creation that did not produce a card',
  })
  cardId: string | null;

  @ApiProperty({ example: 'alice', description: 'Who asked (JWT sub)' })
  requestedBy: string;

  @ApiProperty({
    nullable: true,
    type: String,
    example: '2500',
    description:
      'Top-up, withdrawal or opening balance; for a SYNC, the balance change it found (new balance − the balance stored before, negative when it went down; null when either is unknown)',
  })
  amount: string | null;

  @ApiProperty({ nullable: true, type: String, example: 'XAF' })
  currency: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    example: '7500',
    description: 'Balance after a top-up or withdrawal, or the balance a SYNC read, as the provider said',
  })
  newBalance: string | null;

  @ApiProperty({ nullable: true, type: String, example: 'ctx_9f8e7d6c5b4a3f2e1d0c9b8a' })
  providerTransactionId: string | null;

  @ApiProperty({ nullable: true, type: String, example: null })
  failureReason: string | null;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-23T09:15:00.000Z',
    description: 'When it was stored, before the provider was asked',
  })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:04.000Z', nullable: true, type: String })
  completedAt: string | null;
}

export class CardOperationResultDto extends CardOperationDto {
  @ApiProperty({ enum: CARD_STATUSES, description: 'The card status after the operation' })
  cardStatus: CardStatus;
}

export class CardSyncResultDto extends CardOperationResultDto {
  @ApiProperty({
    nullable: true,
    type: String,
    example: '7000',
    description: 'The balance stored before the sync (newBalance − amount); null when it was never known or the provider gave none',
  })
  previousBalance: string | null;
}

export class CardOperationPageDto extends PageDto {
  @ApiProperty({ type: [CardOperationDto] })
  items: CardOperationDto[];
}

export class ListCardOperationsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: CARD_OPERATION_KINDS })
  @IsOptional()
  @IsIn(CARD_OPERATION_KINDS)
  kind?: CardOperationKind;

  @ApiPropertyOptional({ enum: CARD_OPERATION_STATUSES })
  @IsOptional()
  @IsIn(CARD_OPERATION_STATUSES)
  status?: CardOperationStatus;
}
