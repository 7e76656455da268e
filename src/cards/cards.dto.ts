import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID, registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { checkAmountInput, MAX_DECIMAL_TEXT_LENGTH } from '../common/decimal-text';
import { moneyErrorMessage } from '../common/money';
import { PageDto, PageQueryDto } from '../common/pagination';
import { IsCurrencyCode, IsMoneyAmount } from '../common/money.validator';
import { CARD_STATUSES, type CardStatus } from './card.types';

/** Like `@IsMoneyAmount()`, but zero is accepted: a card may start empty. */
function IsOpeningBalance(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isOpeningBalance',
      target: target.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate: (value: unknown) => checkAmountInput(value).ok || isZeroAmount(value),
        defaultMessage: (args?: ValidationArguments) => {
          const field = args?.property ?? 'balance';
          const checked = checkAmountInput(args?.value);
          if (!checked.ok && checked.reason === 'not_positive') return `${field} must not be negative`;
          return checked.ok ? `${field} is invalid` : moneyErrorMessage(checked.reason, undefined, field);
        },
      },
    });
  };
}

/** "0", "0.00", " 000 " or the number 0. */
export function isZeroAmount(value: unknown): boolean {
  return (
    (typeof value === 'string' && value.length <= MAX_DECIMAL_TEXT_LENGTH && /^0+(\.0+)?$/.test(value.trim())) ||
    (typeof value === 'number' && value === 0)
  );
}

export class CreateCardDto {
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'number' }],
    example: '5000',
    description:
      'Opening balance: zero or a positive decimal with no more decimals than the currency allows. Sent to the provider as a string.',
  })
  @IsOpeningBalance()
  balance: string | number;

  @ApiProperty({ example: 'XAF', description: 'ISO 4217 code among the accepted currencies; the card keeps it for life' })
  @IsCurrencyCode()
  currency: string;
}

export class CardDto {
  @ApiProperty({ example: '4e8a1c2d-7f3b-4a69-9c05-b1d2e3f4a5b6', format: 'uuid' })
  id: string;

  @ApiProperty({ example: '2b7e9c41-6a3d-4f18-b5e2-0c9d8a7f6e51', format: 'uuid' })
  cardUserId: string;

  @ApiProperty({ example: 'alice' })
  ownerId: string;

  @ApiProperty({ example: 'card_7d2f0c1e9b8a6d5c4b3a2f1e', description: "The provider's card_id" })
  providerCardId: string;

  @ApiProperty({ example: '**** **** **** 4242', description: 'The number masked: only the last four digits are ever kept' })
  maskedNumber: string;

  @ApiProperty({ example: '4242' })
  last4: string;

  @ApiProperty({ example: '11/29', description: 'MM/YY as the provider gives it' })
  expiry: string;

  @ApiProperty({ example: 'XAF' })
  currency: string;

  @ApiProperty({ nullable: true, type: String, example: '5000', description: 'Balance as a decimal string (last known to this service)' })
  balance: string | null;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-23T09:15:04.000Z',
    nullable: true,
    type: String,
    description: 'When the balance was last confirmed by the provider',
  })
  balanceSyncedAt: string | null;

  @ApiProperty({ enum: CARD_STATUSES, example: 'ACTIVE', description: 'ACTIVE, FROZEN (provider: disabled) or TERMINATED (final)' })
  status: CardStatus;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:16:30.000Z', nullable: true, type: String })
  terminatedAt: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:04.000Z' })
  updatedAt: string;
}

export class CardDetailDto extends CardDto {
  @ApiProperty({
    description:
      'True when status and balance were refreshed from the provider just now; false: the stored copy (a terminated card is never asked again, or the provider could not be asked)',
  })
  refreshed: boolean;
}

export class CreatedCardDto extends CardDto {
  @ApiPropertyOptional({
    example: '4242424242424242',
    description: 'The full number: present in the first answer only, never stored, never shown again',
  })
  cardNumber?: string;

  @ApiPropertyOptional({ example: '123', description: 'Present in the first answer only, never stored, never shown again' })
  cvv?: string;

  @ApiProperty({ description: 'Always true: cardNumber and cvv appear in the first answer to this request and nowhere else' })
  secretsShownOnce: true;

  @ApiProperty({ example: 'cardNumber and cvv are shown only in the first answer' })
  note: string;

  @ApiProperty({ example: '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d', format: 'uuid', description: 'The stored CREATE operation' })
  operationId: string;
}

export class CardPageDto extends PageDto {
  @ApiProperty({ type: [CardDto] })
  items: CardDto[];
}

export class ListCardsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  cardUserId?: string;

  @ApiPropertyOptional({ enum: CARD_STATUSES })
  @IsOptional()
  @IsIn(CARD_STATUSES)
  status?: CardStatus;
}

export class CardAmountDto {
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'number' }],
    example: '2500',
    description:
      "Positive decimal, as a string or a number, in the card's currency, with no more decimals than it allows (XAF and XOF: none; EUR and USD: 2). Never rounded.",
  })
  @IsMoneyAmount()
  amount: string | number;
}
