import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsEmail,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Matches,
  MaxLength,
  registerDecorator,
  ValidateIf,
  type ValidationArguments,
  type ValidationOptions,
} from 'class-validator';
import { checkAmountInput, moneyErrorMessage } from '../common/money';
import { PageDto, PageQueryDto } from '../common/pagination';
import { IsCurrencyCode, IsMoneyAmount } from '../common/money.validator';
import {
  CARD_OPERATION_KINDS,
  CARD_OPERATION_STATUSES,
  CARD_STATUSES,
  type CardOperationKind,
  type CardOperationStatus,
  type CardStatus,
} from './card.types';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
const upperTrim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim().toUpperCase() : value);

/** `YYYY-MM-DD`, a date that exists (no 2023-02-30), after 1900-01-01 and before today (UTC). */
export function isPastCalendarDate(value: unknown, now = new Date()): boolean {
  if (typeof value !== 'string') return false;
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return false;
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return year >= 1900 && date.getTime() < today;
}

function IsPastCalendarDate(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isPastCalendarDate',
      target: target.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate: (value: unknown) => isPastCalendarDate(value),
        defaultMessage: (args?: ValidationArguments) => `${args?.property ?? 'date'} must be a real past date formatted YYYY-MM-DD`,
      },
    });
  };
}

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
  return (typeof value === 'string' && /^0+(\.0+)?$/.test(value.trim())) || (typeof value === 'number' && value === 0);
}

// ------------------------------------------------------------------------------- card users

export class CreateCardUserDto {
  @ApiProperty({ example: 'Awa', maxLength: 100 })
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  firstName: string;

  @ApiProperty({ example: 'Ndiaye', maxLength: 100 })
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  lastName: string;

  @ApiProperty({ example: 'awa@example.com' })
  @Transform(trim)
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254)
  email: string;

  @ApiProperty({ example: 'CM', description: 'ISO 3166-1 alpha-2 country code (two letters)' })
  @Transform(upperTrim)
  @IsString()
  @Matches(/^[A-Z]{2}$/, { message: 'countryCode must be a two-letter country code' })
  countryCode: string;

  @ApiProperty({ example: '237650000000', description: 'Phone number, 6 to 15 digits, no sign or spaces' })
  @Transform(trim)
  @IsString()
  @Matches(/^\d{6,15}$/, { message: 'contact must be a phone number of 6 to 15 digits' })
  contact: string;

  @ApiProperty({ example: '1990-04-12', description: 'Date of birth: a real past date, YYYY-MM-DD' })
  @IsPastCalendarDate()
  dob: string;

  @ApiPropertyOptional({ default: false, description: 'A business card holder: then businessName is required' })
  @IsOptional()
  @IsBoolean()
  isBusiness?: boolean;

  @ApiProperty({
    example: '12 rue de la Joie',
    maxLength: 200,
    description: "Sent to the provider as `billing_adress` (the provider's spelling)",
  })
  @Transform(trim)
  @IsString()
  @Length(1, 200)
  billingAddress: string;

  @ApiProperty({ example: 'Douala', maxLength: 100 })
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  billingCity: string;

  @ApiProperty({ example: 'CM', maxLength: 100 })
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  billingCountry: string;

  @ApiProperty({ example: 'Littoral', maxLength: 100 })
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  billingState: string;

  @ApiProperty({ example: '00237', maxLength: 20 })
  @Transform(trim)
  @IsString()
  @Length(1, 20)
  billingPostalCode: string;

  @ApiProperty({
    example: 'ID123456',
    maxLength: 64,
    description: 'Identity document number: sent to the provider, stored encrypted, never returned',
  })
  @Transform(trim)
  @IsString()
  @Length(1, 64)
  idNumber: string;

  @ApiPropertyOptional({ example: 'Ndiaye Trading SARL', maxLength: 200, description: 'Required when isBusiness is true' })
  @ValidateIf((o: CreateCardUserDto) => o.isBusiness === true || (o.businessName !== undefined && o.businessName !== null))
  @Transform(trim)
  @IsNotEmpty({ message: 'businessName is required when isBusiness is true' })
  @IsString()
  @MaxLength(200)
  businessName?: string;
}

export class CardUserDto {
  @ApiProperty({ example: '2b7e9c41-6a3d-4f18-b5e2-0c9d8a7f6e51', format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'alice', description: 'The user (JWT sub) who created it and owns its cards' })
  ownerId: string;

  @ApiProperty({ example: 'usr_3f1c0b6e2a9d4c7b8e5f6a1b', description: "The provider's user_id" })
  providerUserId: string;

  @ApiProperty({ example: 'CU12345678901234', description: "The provider's reference (how the provider looks the user up)" })
  providerReference: string;

  @ApiProperty({ example: 'Awa' })
  firstName: string;

  @ApiProperty({ example: 'Ndiaye' })
  lastName: string;

  @ApiProperty({ example: 'awa@example.com' })
  email: string;

  @ApiProperty({ example: 'CM' })
  countryCode: string;

  @ApiProperty({ example: '237650000000' })
  contact: string;

  @ApiProperty({ example: '1990-04-12' })
  dob: string;

  @ApiProperty()
  isBusiness: boolean;

  @ApiProperty({ example: null, nullable: true, type: String })
  businessName: string | null;

  @ApiProperty({ example: '12 rue de la Joie' })
  billingAddress: string;

  @ApiProperty({ example: 'Douala' })
  billingCity: string;

  @ApiProperty({ example: 'CM' })
  billingCountry: string;

  @ApiProperty({ example: 'Littoral' })
  billingState: string;

  @ApiProperty({ example: '00237' })
  billingPostalCode: string;

  @ApiProperty({ type: [String], description: 'Ids (on this API) of the cards of this user, oldest first' })
  cardIds: string[];

  @ApiProperty({ type: [String], description: "The provider's card ids for this user, as last seen" })
  providerCardIds: string[];

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-23T09:15:04.000Z',
    nullable: true,
    type: String,
    description: 'When the provider last confirmed this user',
  })
  lastSyncedAt: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:15:04.000Z' })
  updatedAt: string;
}

export class CardUserDetailDto extends CardUserDto {
  @ApiProperty({
    description: 'True when this answer was refreshed from the provider just now; false: the stored copy (the provider could not be asked)',
  })
  refreshed: boolean;
}

export class CardUserPageDto extends PageDto {
  @ApiProperty({ type: [CardUserDto] })
  items: CardUserDto[];
}

// ------------------------------------------------------------------------------- cards

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

// ------------------------------------------------------------------------------- operations

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

  @ApiProperty({ nullable: true, type: String, example: '2500', description: 'Top-up, withdrawal or opening balance' })
  amount: string | null;

  @ApiProperty({ nullable: true, type: String, example: 'XAF' })
  currency: string | null;

  @ApiProperty({ nullable: true, type: String, example: '7500', description: 'Balance after a top-up or withdrawal, as the provider said' })
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
