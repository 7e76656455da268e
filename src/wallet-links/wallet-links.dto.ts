import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsString, Matches, MaxLength } from 'class-validator';
import { PageDto, PageQueryDto } from '../common/pagination';
import { Trim } from '../common/validation';

export class CreateWalletLinkDto {
  @ApiProperty({ example: 'awa@example.com', description: 'Email of the wallet user; one link per email (compared without case)' })
  @Trim()
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'email must be an email address' })
  email: string;

  @ApiProperty({ example: '650000001', description: 'National number, digits only (4 to 15): no +, space or country code' })
  @Trim()
  @IsString()
  @Matches(/^\d{4,15}$/, { message: 'phone must be 4 to 15 digits, without + or spaces' })
  phone: string;

  @ApiProperty({ example: '+237', description: "Country calling code: '+' then 1 to 4 digits" })
  @Trim()
  @IsString()
  @Matches(/^\+\d{1,4}$/, { message: "phoneCountry must be '+' followed by 1 to 4 digits" })
  phoneCountry: string;
}

export class WalletLinkDto {
  @ApiProperty({ example: '7c6b5a49-3827-4165-a4b3-c2d1e0f9a8b7', format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'MAT48213307', description: "The provider's identifier of the linked wallet user: use it in distributions" })
  matricule: string;

  @ApiProperty({ example: 'awa@example.com' })
  email: string;

  @ApiProperty({ example: '650000001' })
  phone: string;

  @ApiProperty({ example: '+237' })
  phoneCountry: string;

  @ApiProperty({ example: 'cust_42', description: 'The customer who created the link (the token `sub`)' })
  ownerId: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T10:00:00.000Z' })
  createdAt: string;
}

export class WalletLinkPageDto extends PageDto {
  @ApiProperty({ type: [WalletLinkDto] })
  items: WalletLinkDto[];
}

export class ListWalletLinksQueryDto extends PageQueryDto {}
