import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AuthUser } from '../auth/auth.types';
import { afterCursor, DEFAULT_PAGE_SIZE, periodOf, toPage } from '../common/pagination';
import type { AppConfig } from '../config/app-config';
import { currentRequestId } from '../logging/request-context';
import type { AuditEventDto, AuditEventPageDto, ListAuditEventsQueryDto } from './audit.dto';
import { AuditRepository } from './audit.repository';
import type { AuditAction, AuditEventRecord, AuditResourceType, NewAuditEvent } from './audit.types';

/** An event of the current request: its actor is the caller, its request id the request's. */
export function auditEventOf(
  user: AuthUser,
  action: AuditAction,
  resource: { type: AuditResourceType; id: string | null },
  extra: { note?: string | null; details?: Record<string, unknown> | null } = {},
): NewAuditEvent {
  return {
    actor: user.id,
    action,
    resourceType: resource.type,
    resourceId: resource.id,
    requestId: currentRequestId() ?? null,
    note: extra.note ?? null,
    details: extra.details ?? null,
  };
}

/** The audit trail: other areas append to it (within their own transactions when they can), finance reads it. */
@Injectable()
export class AuditService {
  private readonly reportsTimeZone: string;

  constructor(
    private readonly audit: AuditRepository,
    config: ConfigService<AppConfig, true>,
  ) {
    this.reportsTimeZone = config.get('reportsTimeZone', { infer: true });
  }

  /** For actions with no transaction of their own to join (an export). */
  async record(event: NewAuditEvent): Promise<void> {
    await this.audit.append(event);
  }

  async list(query: ListAuditEventsQueryDto): Promise<AuditEventPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.audit.list(
      { actor: query.actor, action: query.action, resourceId: query.resourceId, ...periodOf(query, this.reportsTimeZone) },
      { limit: limit + 1, after: afterCursor(query.cursor) },
    );
    return toPage(rows, limit, (e) => ({ at: e.at, id: e.id }), toDto);
  }
}

function toDto(event: AuditEventRecord): AuditEventDto {
  return {
    id: event.id,
    at: event.at.toISOString(),
    actor: event.actor,
    action: event.action,
    resourceType: event.resourceType,
    resourceId: event.resourceId,
    requestId: event.requestId,
    note: event.note,
    details: event.details,
  };
}
