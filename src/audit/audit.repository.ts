import { Injectable } from '@nestjs/common';
import type { PageRequest } from '../common/pagination';
import { keysetListStatementFor, keysetListStatements, keysetListValues, type ListFilter } from '../database/list-queries';
import { Database, type TransactionRun } from '../database/database';
import { ReplicaReads } from '../database/replica-reads.service';
import { column, sqlStatement, type RowOf } from '../database/sql-statement';
import { AUDIT_ACTIONS, AUDIT_RESOURCE_TYPES, type AuditEventRecord, type AuditFilter, type NewAuditEvent } from './audit.types';

/** The SQL of AuditRepository, written out (listed in src/queries/audit.repository.sql). */
const repository = 'audit.repository';

const AUDIT_COLUMNS = {
  id: column.uuid,
  at: column.timestamptz,
  actor: column.text,
  action: column.text,
  resourceType: column.text,
  resourceId: column.text.orNull,
  requestId: column.text.orNull,
  note: column.text.orNull,
  details: column.jsonb.orNull,
};
const SELECT = (a: string) =>
  `${a}.id, ${a}.at, ${a}.actor, ${a}.action, ${a}.resource_type AS "resourceType", ${a}.resource_id AS "resourceId",
  ${a}.request_id AS "requestId", ${a}.note, ${a}.details`;

const APPEND = sqlStatement(
  repository,
  'append, appendAuditEvent',
  'audit_append',
  `
  INSERT INTO audit_events AS e (id, at, actor, action, resource_type, resource_id, request_id, note, details)
  VALUES (gen_random_uuid(), now(), $1, $2, $3, $4, $5, $6, $7::jsonb)
  RETURNING ${SELECT('e')}`,
  AUDIT_COLUMNS,
);

const LIST_FILTERS: readonly ListFilter<AuditFilter>[] = [
  ['actor', 'actor', (n) => `e.actor = $${n}::text`],
  ['action', 'action', (n) => `e.action = $${n}::text`],
  ['resourceId', 'resource', (n) => `e.resource_id = $${n}::text`],
];
const LIST = keysetListStatements({
  repository,
  usedBy: 'list',
  prefix: 'audit_page',
  from: 'audit_events e',
  time: 'e.at',
  select: SELECT('e'),
  columns: AUDIT_COLUMNS,
  filters: LIST_FILTERS,
});

const appendValues = (event: NewAuditEvent) => [
  event.actor,
  event.action,
  event.resourceType,
  event.resourceId,
  event.requestId,
  event.note,
  event.details ? JSON.stringify(event.details) : null,
];

/**
 * Appends an event inside the caller's transaction, so that a decision and its audit event commit
 * (or roll back) together. For other areas' repositories; nothing above the repositories sees it.
 */
export async function appendAuditEvent(run: TransactionRun, event: NewAuditEvent): Promise<AuditEventRecord> {
  const [row] = (await run(APPEND, appendValues(event))).rows;
  return toRecord(row);
}

/** The audit trail: insert and read only (the table refuses UPDATE, DELETE and TRUNCATE by trigger). */
@Injectable()
export class AuditRepository {
  constructor(
    private readonly database: Database,
    private readonly financeReads: ReplicaReads,
  ) {}

  async append(event: NewAuditEvent): Promise<AuditEventRecord> {
    const [row] = await this.database.run(APPEND, appendValues(event));
    return toRecord(row);
  }

  /** A finance read: on the replica while it is fresh. */
  async list(filter: AuditFilter, page: PageRequest): Promise<AuditEventRecord[]> {
    const rows = await this.financeReads.run(
      keysetListStatementFor(LIST, LIST_FILTERS, filter),
      keysetListValues(LIST_FILTERS, filter, page),
    );
    return rows.map(toRecord);
  }
}

function toRecord(row: RowOf<typeof AUDIT_COLUMNS>): AuditEventRecord {
  const action = AUDIT_ACTIONS.find((known) => known === row.action);
  const resourceType = AUDIT_RESOURCE_TYPES.find((known) => known === row.resourceType);
  if (!action || !resourceType) throw new Error(`audit event ${row.id} has an unknown action or resource type`);
  const details = row.details;
  return {
    ...row,
    action,
    resourceType,
    details: details !== null && typeof details === 'object' && !Array.isArray(details) ? (details as Record<string, unknown>) : null,
  };
}
