import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../database/prisma.service';
import type { PageRequest } from '../common/pagination';
import { keysetPage, withinPeriod } from '../database/list-queries';
import type { AuditAction, AuditEventRecord, AuditFilter, AuditResourceType, NewAuditEvent } from './audit.types';

type AuditRow = Prisma.AuditEventGetPayload<object>;

/**
 * Appends an event inside the caller's transaction, so that a decision and its audit event commit
 * (or roll back) together. For other areas' repositories; nothing above the repositories sees it.
 */
export async function appendAuditEvent(tx: Prisma.TransactionClient, event: NewAuditEvent): Promise<AuditEventRecord> {
  const row = await tx.auditEvent.create({ data: toData(event) });
  return toRecord(row);
}

/** The audit trail: insert and read only (the table refuses UPDATE, DELETE and TRUNCATE by trigger). */
@Injectable()
export class AuditRepository {
  constructor(private readonly prisma: PrismaService) {}

  async append(event: NewAuditEvent): Promise<AuditEventRecord> {
    return toRecord(await this.prisma.auditEvent.create({ data: toData(event) }));
  }

  async list(filter: AuditFilter, page: PageRequest): Promise<AuditEventRecord[]> {
    const where: Prisma.AuditEventWhereInput = {
      ...(filter.actor ? { actor: filter.actor } : {}),
      ...(filter.action ? { action: filter.action } : {}),
      ...(filter.resourceId ? { resourceId: filter.resourceId } : {}),
      ...withinPeriod('at', filter),
    };
    const rows = await this.prisma.auditEvent.findMany(keysetPage('at', where, page));
    return rows.map(toRecord);
  }
}

function toData({ details, ...columns }: NewAuditEvent): Prisma.AuditEventCreateInput {
  return { ...columns, ...(details ? { details: JSON.parse(JSON.stringify(details)) as Prisma.InputJsonValue } : {}) };
}

function toRecord(row: AuditRow): AuditEventRecord {
  return {
    ...row,
    action: row.action as AuditAction,
    resourceType: row.resourceType as AuditResourceType,
    details: (row.details ?? null) as Record<string, unknown> | null,
  };
}
