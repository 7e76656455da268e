import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsEmail,
  IsNotEmpty,
  IsOptional,
  IsString,
  Length,
  Matches,
  MaxLength,
  registerDecorator,
  ValidateIf,
  type ValidationArguments,
  type ValidationOptions,
} from 'class-validator';
import { PageDto } from '../common/pagination';
import { Trim } from '../common/validation';

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

export class CreateCardUserDto {
  @ApiProperty({ example: 'Awa', maxLength: 100 })
  @Trim()
  @IsString()
  @Length(1, 100)
  firstName: string;

  @ApiProperty({ example: 'Ndiaye', maxLength: 100 })
  @Trim()
  @IsString()
  @Length(1, 100)
  lastName: string;

  @ApiProperty({ example: 'awa@example.com' })
  @Trim()
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(254)
  email: string;

  @ApiProperty({ example: 'CM', description: 'ISO 3166-1 alpha-2 country code (two letters)' })
  @Trim({ upperCase: true })
  @IsString()
  @Matches(/^[A-Z]{2}$/, { message: 'countryCode must be a two-letter country code' })
  countryCode: string;

  @ApiProperty({ example: '237650000000', description: 'Phone number, 6 to 15 digits, no sign or spaces' })
  @Trim()
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
  @Trim()
  @IsString()
  @Length(1, 200)
  billingAddress: string;

  @ApiProperty({ example: 'Douala', maxLength: 100 })
  @Trim()
  @IsString()
  @Length(1, 100)
  billingCity: string;

  @ApiProperty({ example: 'CM', maxLength: 100 })
  @Trim()
  @IsString()
  @Length(1, 100)
  billingCountry: string;

  @ApiProperty({ example: 'Littoral', maxLength: 100 })
  @Trim()
  @IsString()
  @Length(1, 100)
  billingState: string;

  @ApiProperty({ example: '00237', maxLength: 20 })
  @Trim()
  @IsString()
  @Length(1, 20)
  billingPostalCode: string;

  @ApiProperty({
    example: 'ID123456',
    maxLength: 64,
    description: 'Identity document number: sent to the provider, stored encrypted, never returned',
  })
  @Trim()
  @IsString()
  @Length(1, 64)
  idNumber: string;

  @ApiPropertyOptional({ example: 'Ndiaye Trading SARL', maxLength: 200, description: 'Required when isBusiness is true' })
  @ValidateIf((o: CreateCardUserDto) => o.isBusiness === true || (o.businessName !== undefined && o.businessName !== null))
  @Trim()
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
