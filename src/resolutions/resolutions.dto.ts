import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsString, Length } from 'class-validator';
import { MANUAL_ORDER_OUTCOMES, type ManualOrderOutcome } from '../orders/order.types';
import {
  MANUAL_CARD_OPERATION_OUTCOMES,
  MANUAL_DISTRIBUTION_OUTCOMES,
  NOTE_MAX_LENGTH,
  type ManualCardOperationOutcome,
  type ManualDistributionOutcome,
} from './resolution-rules';
import { Trim } from '../common/validation';

/** Why a person decided: kept forever in the history and the audit trail. */
export class ManualNoteDto {
  @ApiProperty({
    example: 'Provider dashboard shows SP35245212801583 settled on 2026-11-23',
    minLength: 1,
    maxLength: NOTE_MAX_LENGTH,
    description: 'What the decision rests on (a statement line, a dashboard reference). Trimmed; 1 to 500 characters; no NUL.',
  })
  @Trim()
  @IsString()
  @Length(1, NOTE_MAX_LENGTH)
  note: string;
}

export class ResolveOrderDto extends ManualNoteDto {
  @ApiProperty({ enum: MANUAL_ORDER_OUTCOMES, example: 'SUCCEEDED', description: 'What the provider really did' })
  @IsIn(MANUAL_ORDER_OUTCOMES)
  status: ManualOrderOutcome;
}

export class ClearOrderReviewDto extends ManualNoteDto {}

export class ResolveCardOperationDto extends ManualNoteDto {
  @ApiProperty({ enum: MANUAL_CARD_OPERATION_OUTCOMES, example: 'FAILED', description: 'What the provider really did' })
  @IsIn(MANUAL_CARD_OPERATION_OUTCOMES)
  status: ManualCardOperationOutcome;
}

export class ResolveDistributionDto extends ManualNoteDto {
  @ApiProperty({ enum: MANUAL_DISTRIBUTION_OUTCOMES, example: 'ACCEPTED', description: 'What the provider really did' })
  @IsIn(MANUAL_DISTRIBUTION_OUTCOMES)
  status: ManualDistributionOutcome;
}
