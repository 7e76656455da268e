import { Injectable } from '@nestjs/common';
import { Database } from '../database/database';
import { column, sqlStatement, type SqlStatement } from '../database/sql-statement';

const repository = 'erasure-bodies.repository';

/**
 * The tables where a customer's values sit inside bodies and free text, each read in keyset pages
 * of the customer's rows (JSON read as its text: SQL NULL and JSON null stay apart) and written back
 * row by row where something changed. Which columns: the register's `known-values` entries (and
 * idempotency's request hash), checked by src/customers/erasure-bodies.spec.ts.
 */
export interface BodyTable {
  table: string;
  /** The cursor's first value, below every id of the table. */
  firstCursor: string;
  /** Answers `id` (as text) and the columns, for ($scope..., $after, $limit). */
  select: SqlStatement<Record<string, string | null>>;
  /** Takes one array per column, the ids first, in `columns` order. */
  update: SqlStatement;
  columns: readonly { name: string; json: boolean }[];
}

const text = column.text.orNull;
const UUID_ZERO = '00000000-0000-0000-0000-000000000000';

export const EVENTS_BODIES: BodyTable = {
  table: 'events',
  firstCursor: '',
  columns: [{ name: 'snapshot', json: true }],
  select: sqlStatement(
    repository,
    'page',
    'erasure_events_page',
    `
    SELECT id, snapshot::text AS snapshot FROM events
    WHERE resource_id = ANY($1::uuid[]) AND id > $2::text ORDER BY id LIMIT $3::int`,
    { id: column.text, snapshot: text },
  ),
  update: sqlStatement(
    repository,
    'write',
    'erasure_events_write',
    `
    UPDATE events e SET snapshot = v.snapshot::jsonb
    FROM unnest($1::text[], $2::text[]) AS v(id, snapshot) WHERE e.id = v.id`,
  ),
};

export const WEBHOOK_ATTEMPTS_BODIES: BodyTable = {
  table: 'webhook_attempts',
  firstCursor: '0',
  columns: [{ name: 'response_body', json: false }],
  select: sqlStatement(
    repository,
    'page',
    'erasure_webhook_attempts_page',
    `
    SELECT a.id::text AS id, a.response_body FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
    WHERE d.event_id IN (SELECT id FROM events WHERE resource_id = ANY($1::uuid[])) AND a.response_body IS NOT NULL
      AND a.id > $2::bigint
    ORDER BY a.id LIMIT $3::int`,
    { id: column.text, response_body: text },
  ),
  update: sqlStatement(
    repository,
    'write',
    'erasure_webhook_attempts_write',
    `
    UPDATE webhook_attempts a SET response_body = v.response_body
    FROM unnest($1::bigint[], $2::text[]) AS v(id, response_body) WHERE a.id = v.id`,
  ),
};

/**
 * The customer's keys; and of other users' (staff's), those whose resource is the customer's (an
 * admin's distribution) or whose answer holds one of its values (a resolution answers the order):
 * a day of keys, read whole.
 */
export const IDEMPOTENCY_BODIES: BodyTable = {
  table: 'idempotency_records',
  firstCursor: UUID_ZERO,
  columns: [
    { name: 'response_body', json: true },
    { name: 'request_hash', json: false },
  ],
  select: sqlStatement(
    repository,
    'page',
    'erasure_idempotency_page',
    `
    SELECT id::text AS id, response_body::text AS response_body, request_hash FROM idempotency_records
    WHERE (user_id = $1::text OR resource_id = ANY($2::uuid[])
           OR EXISTS (SELECT 1 FROM unnest($3::text[]) AS n(needle) WHERE strpos(lower(coalesce(response_body::text, '')), n.needle) > 0))
      AND state = 'completed' AND id > $4::uuid
    ORDER BY id LIMIT $5::int`,
    { id: column.text, response_body: text, request_hash: column.text },
  ),
  update: sqlStatement(
    repository,
    'write',
    'erasure_idempotency_write',
    `
    UPDATE idempotency_records r SET response_body = v.response_body::jsonb, request_hash = v.request_hash
    FROM unnest($1::uuid[], $2::text[], $3::text[]) AS v(id, response_body, request_hash) WHERE r.id = v.id`,
  ),
};

export const CALLBACKS_BODIES: BodyTable = {
  table: 'provider_callbacks',
  firstCursor: UUID_ZERO,
  columns: [
    { name: 'query', json: true },
    { name: 'headers', json: true },
    { name: 'raw_body', json: false },
  ],
  select: sqlStatement(
    repository,
    'page',
    'erasure_callbacks_page',
    `
    SELECT id::text AS id, query::text AS query, headers::text AS headers, raw_body FROM provider_callbacks
    WHERE order_id = ANY($1::uuid[]) AND id > $2::uuid ORDER BY id LIMIT $3::int`,
    { id: column.text, query: text, headers: text, raw_body: text },
  ),
  update: sqlStatement(
    repository,
    'write',
    'erasure_callbacks_write',
    `
    UPDATE provider_callbacks c SET query = v.query::jsonb, headers = v.headers::jsonb, raw_body = v.raw_body
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS v(id, query, headers, raw_body) WHERE c.id = v.id`,
  ),
};

export const STATUS_CHANGES_BODIES: BodyTable = {
  table: 'order_status_changes',
  firstCursor: '0',
  columns: [
    { name: 'detail', json: false },
    { name: 'note', json: false },
  ],
  select: sqlStatement(
    repository,
    'page',
    'erasure_status_changes_page',
    `
    SELECT id::text AS id, detail, note FROM order_status_changes
    WHERE order_id = ANY($1::uuid[]) AND (detail IS NOT NULL OR note IS NOT NULL) AND id > $2::bigint
    ORDER BY id LIMIT $3::int`,
    { id: column.text, detail: text, note: text },
  ),
  update: sqlStatement(
    repository,
    'write',
    'erasure_status_changes_write',
    `
    UPDATE order_status_changes s SET detail = v.detail, note = v.note
    FROM unnest($1::bigint[], $2::text[], $3::text[]) AS v(id, detail, note) WHERE s.id = v.id`,
  ),
};

export const CARD_OPERATIONS_BODIES: BodyTable = {
  table: 'card_operations',
  firstCursor: UUID_ZERO,
  columns: [
    { name: 'provider_response', json: true },
    { name: 'failure_reason', json: false },
  ],
  select: sqlStatement(
    repository,
    'page',
    'erasure_card_operations_page',
    `
    SELECT id::text AS id, provider_response::text AS provider_response, failure_reason FROM card_operations
    WHERE card_user_id = ANY($1::uuid[]) AND id > $2::uuid ORDER BY id LIMIT $3::int`,
    { id: column.text, provider_response: text, failure_reason: text },
  ),
  update: sqlStatement(
    repository,
    'write',
    'erasure_card_operations_write',
    `
    UPDATE card_operations o SET provider_response = v.provider_response::jsonb, failure_reason = v.failure_reason
    FROM unnest($1::uuid[], $2::text[], $3::text[]) AS v(id, provider_response, failure_reason) WHERE o.id = v.id`,
  ),
};

export const DISTRIBUTIONS_BODIES: BodyTable = {
  table: 'distributions',
  firstCursor: UUID_ZERO,
  columns: [
    { name: 'payer', json: false },
    { name: 'provider_request', json: true },
    { name: 'provider_response', json: true },
    { name: 'provider_message', json: false },
    { name: 'failure_reason', json: false },
  ],
  select: sqlStatement(
    repository,
    'page',
    'erasure_distributions_page',
    `
    SELECT id::text AS id, payer, provider_request::text AS provider_request, provider_response::text AS provider_response,
           provider_message, failure_reason
    FROM distributions WHERE id = ANY($1::uuid[]) AND id > $2::uuid ORDER BY id LIMIT $3::int`,
    { id: column.text, payer: text, provider_request: text, provider_response: text, provider_message: text, failure_reason: text },
  ),
  update: sqlStatement(
    repository,
    'write',
    'erasure_distributions_write',
    `
    UPDATE distributions d SET payer = v.payer, provider_request = v.provider_request::jsonb,
      provider_response = v.provider_response::jsonb, provider_message = v.provider_message, failure_reason = v.failure_reason
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
      AS v(id, payer, provider_request, provider_response, provider_message, failure_reason)
    WHERE d.id = v.id`,
  ),
};

/**
 * The call log is not linked to a customer: its rows are found by the customer's values in the URL
 * or the bodies (lower-cased text, JSON-escaped needles), one pass over the table per erasure.
 */
export const PROVIDER_CALLS_BODIES: BodyTable = {
  table: 'provider_calls',
  firstCursor: UUID_ZERO,
  columns: [
    { name: 'url', json: false },
    { name: 'request_body', json: true },
    { name: 'response_body', json: true },
  ],
  select: sqlStatement(
    repository,
    'page',
    'erasure_provider_calls_page',
    `
    SELECT id::text AS id, url, request_body::text AS request_body, response_body::text AS response_body FROM provider_calls
    WHERE id > $2::uuid
      AND EXISTS (
        SELECT 1 FROM unnest($1::text[]) AS n(needle)
        WHERE strpos(lower(url || ' ' || coalesce(request_body::text, '') || ' ' || coalesce(response_body::text, '')), n.needle) > 0)
    ORDER BY id LIMIT $3::int`,
    { id: column.text, url: text, request_body: text, response_body: text },
  ),
  update: sqlStatement(
    repository,
    'write',
    'erasure_provider_calls_write',
    `
    UPDATE provider_calls c SET url = v.url, request_body = v.request_body::jsonb, response_body = v.response_body::jsonb
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS v(id, url, request_body, response_body) WHERE c.id = v.id`,
  ),
};

export const BODY_TABLES: readonly BodyTable[] = [
  PROVIDER_CALLS_BODIES,
  CALLBACKS_BODIES,
  STATUS_CHANGES_BODIES,
  CARD_OPERATIONS_BODIES,
  DISTRIBUTIONS_BODIES,
  EVENTS_BODIES,
  WEBHOOK_ATTEMPTS_BODIES,
  IDEMPOTENCY_BODIES,
];

export type BodyRow = Record<string, string | null> & { id: string };

/** Pages through a body table's rows of one customer and writes back the rows that changed. */
@Injectable()
export class ErasureBodiesRepository {
  constructor(private readonly database: Database) {}

  async page(table: BodyTable, scope: unknown[], after: string, limit: number): Promise<BodyRow[]> {
    return (await this.database.run(table.select, [...scope, after, limit])) as BodyRow[];
  }

  /** One statement for the changed rows of a page (each row: its id, then its columns in order). */
  async write(table: BodyTable, rows: readonly BodyRow[]): Promise<void> {
    if (rows.length === 0) return;
    const arrays = [rows.map((row) => row.id), ...table.columns.map(({ name }) => rows.map((row) => row[name] ?? null))];
    await this.database.runCounted(table.update, arrays);
  }
}
