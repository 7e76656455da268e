import { ApiProperty } from '@nestjs/swagger';
import { IsInt, IsString, MaxLength, Min, MinLength } from 'class-validator';
import { Trim } from '../common/validation';

export const CUSTOMER_LIMIT_SOURCES = ['default', 'override'] as const;
export type CustomerLimitSource = (typeof CUSTOMER_LIMIT_SOURCES)[number];
export const CUSTOMER_LIMIT_NOTE_MAX_LENGTH = 500;

export class CustomerLimitDto {
  @ApiProperty({ example: 'user-4821', description: 'The customer: the `sub` of its bearer tokens' })
  subject: string;

  @ApiProperty({
    example: 30,
    description:
      'Calls to the provider’s /api/agent/* this customer’s requests may cause per rolling hour, all instances together; 0: blocked',
  })
  providerCallsPerHour: number;

  @ApiProperty({
    enum: CUSTOMER_LIMIT_SOURCES,
    example: 'default',
    description: '`default`: PROVIDER_CUSTOMER_HOURLY_LIMIT; `override`: set for this customer by an admin',
  })
  source: CustomerLimitSource;

  @ApiProperty({ example: 12, description: 'Calls counted against this customer in the rolling hour (may exceed a limit lowered since)' })
  usedInLastHour: number;
}

export class SetCustomerLimitDto {
  @ApiProperty({
    example: 120,
    minimum: 0,
    description: 'Calls per rolling hour; 0 blocks the customer’s provider calls; at most PROVIDER_AGENT_HOURLY_LIMIT (the whole budget)',
  })
  @IsInt()
  @Min(0)
  providerCallsPerHour: number;

  @ApiProperty({
    example: 'Marketplace seller with a daily batch of pay-ins (ticket OPS-1432)',
    maxLength: CUSTOMER_LIMIT_NOTE_MAX_LENGTH,
    description: 'Why, for the audit trail (`customer_limit.set`): a reason or a ticket, no personal data (the trail is append-only)',
  })
  @Trim()
  @IsString()
  @MinLength(1)
  @MaxLength(CUSTOMER_LIMIT_NOTE_MAX_LENGTH)
  note: string;
}
