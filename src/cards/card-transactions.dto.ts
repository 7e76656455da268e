import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageDto } from '../common/pagination';

export class CardTransactionDto {
  @ApiProperty({ nullable: true, type: String, example: 'ctx_9f8e7d6c5b4a3f2e1d0c9b8a' })
  transactionId: string | null;

  @ApiProperty({ nullable: true, type: String, example: 'topup' })
  type: string | null;

  @ApiProperty({ nullable: true, type: String, example: '2500' })
  amount: string | null;

  @ApiProperty({ nullable: true, type: String, example: 'XAF' })
  currency: string | null;

  @ApiProperty({ nullable: true, type: String, example: '7500' })
  balanceAfter: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:00.000Z', nullable: true, type: String })
  createdAt: string | null;

  @ApiPropertyOptional({ description: 'Any other field the provider sent, camelCased (the provider does not document this listing)' })
  extra?: Record<string, unknown>;
}

export class CardTransactionPageDto extends PageDto {
  @ApiProperty({ example: '4e8a1c2d-7f3b-4a69-9c05-b1d2e3f4a5b6', format: 'uuid' })
  cardId: string;

  @ApiProperty({
    example: '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d',
    format: 'uuid',
    description: 'The stored TRANSACTIONS operation of this read',
  })
  operationId: string;

  @ApiProperty({ type: [CardTransactionDto], description: "In the provider's order" })
  items: CardTransactionDto[];
}
