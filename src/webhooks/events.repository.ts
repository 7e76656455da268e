import { Injectable } from '@nestjs/common';
import { appendAuditEvent } from '../audit/audit.repository';
import type { NewAuditEvent } from '../audit/audit.types';
import type { PageRequest } from '../common/pagination';
import { keysetListStatementFor, keysetListStatements, keysetListValues, type ListFilter } from '../database/list-queries';
import { Database } from '../database/database';
import { ReplicaReads } from '../database/replica-reads.service';
import type { Proven, SameValues } from '../database/same-values';
import { column, isoTimeSql, sqlStatement, type RowOf } from '../database/sql-statement';
import type { WebhookDeliveryStatus as DbWebhookDeliveryStatus } from '../generated/prisma/enums';
import {
  WEBHOOK_DELIVERY_STATUSES,
  type EventDetailRecord,
  type EventFilter,
  type EventRecord,
  type RedeliveryResult,
  type WebhookDeliveryRecord,
  type WebhookDeliveryStatus,
} from './events.types';

/** The SQL of EventsRepository, written out (listed in src/queries/events.repository.sql). */
const repository = 'events.repository';

export type EventEnums = [Proven<SameValues<WebhookDeliveryStatus, DbWebhookDeliveryStatus>>];

/** An event id as the trigger writes it: `evt_` and a UUID's 32 hex digits. */
export const EVENT_ID_PATTERN = /^evt_[0-9a-f]{32}$/;

/**
 * The snapshot of the events row `alias` as renderEventBody reads it: the row as the change left
 * it, and for a distribution its shares (rows of their own, written with it and never changed),
 * numbers as their exact text like the rest of the snapshot. Every statement that reads an event to
 * show or deliver it selects this rather than the bare column.
 */
export const eventSnapshotSql = (
  alias: string,
) => `CASE WHEN ${alias}.resource_type = 'distribution' THEN ${alias}.snapshot || jsonb_build_object('shares',
      (SELECT coalesce(jsonb_agg(jsonb_build_object('position', s.position::text, 'matricule', s.matricule, 'rate', s.rate::text,
                                                    'share_minor', s.share_minor::text) ORDER BY s.position), '[]'::jsonb)
       FROM distribution_shares s WHERE s.distribution_id = ${alias}.resource_id))
    ELSE ${alias}.snapshot END`;

const EVENT_COLUMNS = {
  id: column.text,
  type: column.text,
  resourceType: column.text,
  resourceId: column.uuid,
  previousStatus: column.text.orNull,
  snapshot: column.jsonb,
  createdAt: column.timestamptz,
};
const SELECT_EVENT = (e: string) =>
  `${e}.id, ${e}.type, ${e}.resource_type AS "resourceType", ${e}.resource_id AS "resourceId",
    ${e}.previous_status AS "previousStatus", ${eventSnapshotSql(e)} AS snapshot, ${e}.created_at AS "createdAt"`;

const LIST_FILTERS: readonly ListFilter<EventFilter>[] = [
  ['type', 'type', (n) => `e.type = $${n}::text`],
  ['resourceId', 'resource', (n) => `e.resource_id = $${n}::uuid`],
];

/** The list (keysetListStatements). An event's id is text (`evt_` and 32 hex digits): the position's id, a UUID like every cursor's, is compared in that spelling, which sorts the same. */
const LIST = keysetListStatements({
  repository,
  usedBy: 'list',
  prefix: 'events_page',
  from: 'events e',
  time: 'e.created_at',
  select: SELECT_EVENT('e'),
  columns: EVENT_COLUMNS,
  filters: LIST_FILTERS,
  positionId: `'evt_' || replace($4::uuid::text, '-', '')`,
});

/** A delivery as JSON, with its endpoint's URL and its attempts (oldest first). */
const deliveryJson = (d: string, w: string) => `json_build_object(
      'id', ${d}.id, 'endpointId', ${d}.endpoint_id, 'endpointUrl', ${w}.url, 'status', ${d}.status,
      'attemptCount', ${d}.attempt_count, 'nextAttemptAt', ${isoTimeSql(`${d}.next_attempt_at`)},
      'createdAt', ${isoTimeSql(`${d}.created_at`)},
      'completedAt', ${isoTimeSql(`${d}.completed_at`)},
      'attempts', (SELECT coalesce(json_agg(json_build_object(
                     'at', ${isoTimeSql('a.at')}, 'httpStatus', a.http_status, 'durationMs', a.duration_ms,
                     'error', a.error, 'responseBody', a.response_body) ORDER BY a.id), '[]'::json)
                   FROM webhook_attempts a WHERE a.delivery_id = ${d}.id))`;

const FIND = sqlStatement(
  repository,
  'findById',
  'events_find',
  `
  SELECT ${SELECT_EVENT('e')},
    (SELECT coalesce(json_agg(${deliveryJson('d', 'w')} ORDER BY d.created_at, d.id), '[]'::json)
     FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
     WHERE d.event_id = e.id) AS deliveries
  FROM events e WHERE e.id = $1::text`,
  { ...EVENT_COLUMNS, deliveries: column.builtJson<WebhookDeliveryRecord[]>() },
);

const FIND_TYPE = sqlStatement(
  repository,
  'redeliver',
  'events_find_type',
  `
  SELECT e.type FROM events e WHERE e.id = $1::text`,
  { type: column.text },
);

const FIND_ENDPOINT = sqlStatement(
  repository,
  'redeliver',
  'events_endpoint_status',
  `
  SELECT w.status::text AS status FROM webhook_endpoints w WHERE w.id = $1::uuid`,
  { status: column.text },
);

const CREATED_DELIVERY_COLUMNS = {
  id: column.uuid,
  endpointId: column.uuid,
  endpointUrl: column.text,
  status: column.enum('WebhookDeliveryStatus', WEBHOOK_DELIVERY_STATUSES),
  attemptCount: column.int4,
  nextAttemptAt: column.text,
  createdAt: column.text,
};
const SELECT_CREATED = `
  SELECT c.id, c.endpoint_id AS "endpointId", w.url AS "endpointUrl", c.status, c.attempt_count AS "attemptCount",
         ${isoTimeSql('c.next_attempt_at')} AS "nextAttemptAt", ${isoTimeSql('c.created_at')} AS "createdAt"
  FROM created c JOIN webhook_endpoints w ON w.id = c.endpoint_id
  ORDER BY w.created_at, w.id`;

/** A new delivery of event $1 to endpoint $2, due now (the delivery job picks it up). */
const REDELIVER_TO = sqlStatement(
  repository,
  'redeliver',
  'events_redeliver_to',
  `
  WITH created AS (
    INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, attempt_count, next_attempt_at, created_at)
    SELECT gen_random_uuid(), $1::text, w.id, 'PENDING', 0, now(), now() FROM webhook_endpoints w WHERE w.id = $2::uuid
    RETURNING id, endpoint_id, status, attempt_count, next_attempt_at, created_at)${SELECT_CREATED}`,
  CREATED_DELIVERY_COLUMNS,
);

/** A new delivery of event $1 (of type $2) to every enabled endpoint subscribed to it, as the fan-out trigger chooses them. */
const REDELIVER_ALL = sqlStatement(
  repository,
  'redeliver',
  'events_redeliver_all',
  `
  WITH created AS (
    INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, attempt_count, next_attempt_at, created_at)
    SELECT gen_random_uuid(), $1::text, w.id, 'PENDING', 0, now(), now() FROM webhook_endpoints w
    WHERE w.status = 'ENABLED' AND (w.events IS NULL OR cardinality(w.events) = 0 OR $2::text = ANY(w.events))
    RETURNING id, endpoint_id, status, attempt_count, next_attempt_at, created_at)${SELECT_CREATED}`,
  CREATED_DELIVERY_COLUMNS,
);

/** The events the database writes (by trigger) and their deliveries: read, and delivered again on request. */
@Injectable()
export class EventsRepository {
  constructor(
    private readonly database: Database,
    private readonly financeReads: ReplicaReads,
  ) {}

  /** A finance read: on the replica while it is fresh. */
  async list(filter: EventFilter, page: PageRequest): Promise<EventRecord[]> {
    return this.financeReads.run(keysetListStatementFor(LIST, LIST_FILTERS, filter), keysetListValues(LIST_FILTERS, filter, page));
  }

  async findById(id: string): Promise<EventDetailRecord | undefined> {
    const [row] = await this.database.run(FIND, [id]);
    if (!row) return undefined;
    const { deliveries, ...event } = row;
    return { event, deliveries };
  }

  /**
   * New deliveries of an event, due now, to one endpoint (enabled, subscribed or not) or to every
   * enabled endpoint subscribed to its type; committed with their audit event, or not at all.
   */
  async redeliver(
    eventId: string,
    endpointId: string | undefined,
    audit: (deliveryIds: string[]) => NewAuditEvent,
  ): Promise<RedeliveryResult> {
    return this.database.inTransaction(async (run) => {
      const [event] = (await run(FIND_TYPE, [eventId])).rows;
      if (!event) return { kind: 'no_event' };
      let created: RowOf<typeof CREATED_DELIVERY_COLUMNS>[];
      if (endpointId === undefined) {
        created = (await run(REDELIVER_ALL, [eventId, event.type])).rows;
      } else {
        const [endpoint] = (await run(FIND_ENDPOINT, [endpointId])).rows;
        if (!endpoint) return { kind: 'no_endpoint' };
        if (endpoint.status !== 'ENABLED') return { kind: 'endpoint_disabled' };
        created = (await run(REDELIVER_TO, [eventId, endpointId])).rows;
      }
      await appendAuditEvent(run, audit(created.map((d) => d.id)));
      return { kind: 'redelivered', deliveries: created.map((d) => ({ ...d, completedAt: null, attempts: [] })) };
    });
  }
}
