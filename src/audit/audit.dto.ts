import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length } from 'class-validator';
import { PageDto, PageQueryDto, PeriodQueryDto } from '../common/pagination';
import { AUDIT_ACTIONS, AUDIT_RESOURCE_TYPES, type AuditAction, type AuditResourceType } from './audit.types';
import { Trim } from '../common/validation';

export class AuditFilterQueryDto extends PeriodQueryDto {
  @ApiPropertyOptional({ example: 'alice', description: 'Only what this user (the token `sub`) did' })
  @IsOptional()
  @Trim()
  @IsString()
  @Length(1, 200)
  actor?: string;

  @ApiPropertyOptional({ enum: AUDIT_ACTIONS, example: 'order.resolved' })
  @IsOptional()
  @IsIn(AUDIT_ACTIONS)
  action?: AuditAction;

  @ApiPropertyOptional({
    example: '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f',
    description: 'Only what was done to this order, card operation or distribution',
  })
  @IsOptional()
  @Trim()
  @IsString()
  @Length(1, 200)
  resourceId?: string;
}

export class ListAuditEventsQueryDto extends IntersectionType(AuditFilterQueryDto, PageQueryDto) {}

export class AuditEventDto {
  @ApiProperty({ example: '1d2c3b4a-5f6e-4d7c-8b9a-0f1e2d3c4b5a', format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T12:00:00.000Z' })
  at: string;

  @ApiProperty({ example: 'alice', description: 'The token `sub` of whoever acted' })
  actor: string;

  @ApiProperty({ enum: AUDIT_ACTIONS, example: 'order.resolved' })
  action: AuditAction;

  @ApiProperty({ enum: AUDIT_RESOURCE_TYPES, example: 'order' })
  resourceType: AuditResourceType;

  @ApiProperty({
    nullable: true,
    type: String,
    example: '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f',
    description: 'Null for an export (a filtered set, see details.filters)',
  })
  resourceId: string | null;

  @ApiProperty({
    example: '4f0c8a2e-6d7b-4c55-9a5e-2c1d0e9b7a11',
    nullable: true,
    type: String,
    description: 'The x-request-id of the request that did it',
  })
  requestId: string | null;

  @ApiProperty({ nullable: true, type: String, example: 'Provider statement of 2026-11-23 shows the payment as settled' })
  note: string | null;

  @ApiProperty({
    nullable: true,
    type: 'object',
    additionalProperties: true,
    example: { fromStatus: 'UNKNOWN', toStatus: 'SUCCEEDED' },
    description: 'Statuses of a decision, filters of an export, kind and status of a distribution',
  })
  details: Record<string, unknown> | null;
}

export class AuditEventPageDto extends PageDto {
  @ApiProperty({ type: [AuditEventDto] })
  items: AuditEventDto[];
}
