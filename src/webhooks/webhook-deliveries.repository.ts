import { Injectable } from '@nestjs/common';
import { Database } from '../database/database';
import { column, sqlStatement, type StatementRow } from '../database/sql-statement';
import { eventSnapshotSql } from './events.repository';

/** The SQL of WebhookDeliveriesRepository, written out (listed in src/queries/webhook-deliveries.repository.sql). */
const repository = 'webhook-deliveries.repository';

/**
 * Claims for the claim $1, for $3 seconds, up to $2 due deliveries (PENDING, `next_attempt_at`
 * passed, unclaimed or their claim lapsed: the instance that held it died) of ENABLED endpoints,
 * fairly, in one statement:
 * - per endpoint, at most its allowance: $4 (WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT) less what this
 *   instance already has in flight to it ($5 the endpoints, $6 their attempts in flight), its oldest
 *   due first, read through `webhook_deliveries_endpoint_id_status_next_attempt_at_idx`;
 * - across endpoints, turn by turn: every endpoint's oldest due delivery before any endpoint's
 *   second, so a backlog of one endpoint (one that hangs, with its retries due) never takes the
 *   slots of another's new event.
 * Rows another instance is claiming at this moment are skipped (`SKIP LOCKED`), never waited for.
 * Answers each with its event and its endpoint (URL and sealed secrets; the previous secret only
 * while it still signs, as SIGNING_SELECT of the endpoints repository), the event's snapshot as
 * `eventSnapshotSql` reads it (a distribution's shares). Idle, it is one index probe per enabled
 * endpoint that finds nothing.
 */
const CLAIM = sqlStatement(
  repository,
  'claim',
  'webhook_deliveries_claim',
  `
  WITH allowance AS (
    SELECT w.id AS endpoint_id, $4::int4 - coalesce(f.in_flight, 0) AS room
    FROM webhook_endpoints w
    LEFT JOIN unnest($5::uuid[], $6::int4[]) AS f(endpoint_id, in_flight) ON f.endpoint_id = w.id
    WHERE w.status = 'ENABLED'
  ), candidates AS (
    SELECT c.id, c.next_attempt_at, a.endpoint_id
    FROM allowance a CROSS JOIN LATERAL (
      SELECT q.id, q.next_attempt_at FROM webhook_deliveries q
      WHERE q.endpoint_id = a.endpoint_id AND q.status = 'PENDING' AND q.next_attempt_at <= now()
        AND (q.claimed_until IS NULL OR q.claimed_until < now())
      ORDER BY q.next_attempt_at
      LIMIT greatest(a.room, 0)
      FOR UPDATE OF q SKIP LOCKED) c
    WHERE a.room > 0
  ), chosen AS (
    SELECT t.id FROM (
      SELECT id, next_attempt_at, row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at) AS turn FROM candidates) t
    ORDER BY t.turn, t.next_attempt_at
    LIMIT $2)
  UPDATE webhook_deliveries d
  SET claimed_until = now() + make_interval(secs => $3::float8), claimed_by = $1
  FROM events e, webhook_endpoints w
  WHERE d.id IN (SELECT id FROM chosen)
    AND e.id = d.event_id AND w.id = d.endpoint_id
  RETURNING d.id, d.attempt_count AS "attemptCount", d.claimed_by AS "claimedBy",
            e.id AS "eventId", e.type AS "eventType", e.resource_type AS "resourceType", e.resource_id AS "resourceId",
            e.previous_status AS "previousStatus", ${eventSnapshotSql('e')} AS snapshot, e.created_at AS "eventCreatedAt",
            w.id AS "endpointId", w.url, w.secret_encrypted AS "secretEncrypted",
            CASE WHEN w.previous_secret_until > now() THEN w.previous_secret_encrypted END AS "previousSecretEncrypted"`,
  {
    id: column.uuid,
    attemptCount: column.int4,
    claimedBy: column.text.orNull,
    eventId: column.text,
    eventType: column.text,
    resourceType: column.text,
    resourceId: column.uuid,
    previousStatus: column.text.orNull,
    snapshot: column.jsonb,
    eventCreatedAt: column.timestamptz,
    endpointId: column.uuid,
    url: column.text,
    secretEncrypted: column.text,
    previousSecretEncrypted: column.text.orNull,
  },
);

/**
 * Records a batch of attempts in one statement, one array per column ($1 … $10, one element per
 * attempt). Each attempt row is inserted (an attempt that was made is kept, whatever happened to
 * its claim since). Its delivery moves only while the attempt's claim still holds it (`claimed_by`
 * is the claim that sent it, and it is still PENDING): a claim that lapsed and was taken by another
 * instance is not overwritten. `outcome` is DELIVERED, RETRY (again after `retry_in` seconds),
 * FAILED (out of attempts) or GONE (410: FAILED, and the endpoint disabled). A disabled endpoint's
 * other PENDING deliveries become FAILED with it: nothing more is sent to it, and they stay listed.
 * Answers the endpoints disabled.
 */
const RECORD = sqlStatement(
  repository,
  'record',
  'webhook_deliveries_record',
  `
  WITH r AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::float8[], $5::timestamptz[], $6::int4[], $7::int4[], $8::text[],
                         $9::text[], $10::text[])
      AS r(delivery_id, claimed_by, outcome, retry_in, at, http_status, duration_ms, error, response_body, gone_reason)
  ), attempts AS (
    INSERT INTO webhook_attempts (delivery_id, at, http_status, duration_ms, error, response_body)
    SELECT r.delivery_id, r.at, r.http_status, r.duration_ms, r.error, r.response_body
    FROM r WHERE EXISTS (SELECT 1 FROM webhook_deliveries x WHERE x.id = r.delivery_id)
  ), moved AS (
    UPDATE webhook_deliveries d
    SET status = CASE r.outcome WHEN 'DELIVERED' THEN 'DELIVERED' WHEN 'RETRY' THEN 'PENDING' ELSE 'FAILED' END::"WebhookDeliveryStatus",
        attempt_count = d.attempt_count + 1,
        next_attempt_at = CASE WHEN r.outcome = 'RETRY' THEN now() + make_interval(secs => r.retry_in) ELSE d.next_attempt_at END,
        completed_at = CASE WHEN r.outcome = 'RETRY' THEN NULL ELSE now() END,
        claimed_until = NULL, claimed_by = NULL
    FROM r
    WHERE d.id = r.delivery_id AND d.claimed_by = r.claimed_by AND d.status = 'PENDING'
    RETURNING d.endpoint_id, r.outcome, r.gone_reason
  ), disabled AS (
    UPDATE webhook_endpoints w
    SET status = 'DISABLED', disabled_reason = g.gone_reason, updated_at = now()
    FROM (SELECT DISTINCT ON (endpoint_id) endpoint_id, gone_reason FROM moved WHERE outcome = 'GONE') g
    WHERE w.id = g.endpoint_id AND w.status = 'ENABLED'
    RETURNING w.id
  ), dropped AS (
    UPDATE webhook_deliveries d
    SET status = 'FAILED', completed_at = now(), claimed_until = NULL, claimed_by = NULL
    FROM disabled
    WHERE d.endpoint_id = disabled.id AND d.status = 'PENDING' AND d.id NOT IN (SELECT delivery_id FROM r)
  )
  SELECT id AS "endpointId" FROM disabled`,
  { endpointId: column.uuid },
);

/** Frees the claims of deliveries not attempted after all (a clean shutdown): due again at once, for any instance. */
const RELEASE = sqlStatement(
  repository,
  'release',
  'webhook_deliveries_release',
  `
  UPDATE webhook_deliveries SET claimed_until = NULL, claimed_by = NULL
  WHERE id = ANY($1::uuid[]) AND claimed_by = ANY($2::text[]) AND status = 'PENDING'`,
);

export type ClaimedDelivery = StatementRow<typeof CLAIM>;

export type AttemptOutcome = 'DELIVERED' | 'RETRY' | 'FAILED' | 'GONE';

/** One attempt's result, as it is recorded. */
export interface RecordedAttempt {
  deliveryId: string;
  /** The claim it was sent under. */
  claimedBy: string;
  outcome: AttemptOutcome;
  /** RETRY: seconds until the next attempt. */
  retryInSeconds?: number;
  at: Date;
  httpStatus?: number;
  durationMs: number;
  error?: string;
  responseBody?: string;
}

/** The delivery queue: `webhook_deliveries` polled with `FOR UPDATE SKIP LOCKED` and a claim lease (docs/adr/0008). */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(private readonly database: Database) {}

  /**
   * Claims up to `limit` due deliveries for `claim` during `leaseSeconds`, at most `perEndpoint`
   * in flight to one endpoint counting `inFlight` (this instance's attempts in flight, per endpoint id).
   */
  claim(
    claim: string,
    limit: number,
    leaseSeconds: number,
    perEndpoint: number,
    inFlight: ReadonlyMap<string, number>,
  ): Promise<ClaimedDelivery[]> {
    return this.database.run(CLAIM, [claim, limit, leaseSeconds, perEndpoint, [...inFlight.keys()], [...inFlight.values()]]);
  }

  /** Records the attempts in one statement; answers the ids of the endpoints a 410 disabled. */
  async record(attempts: readonly RecordedAttempt[]): Promise<string[]> {
    if (attempts.length === 0) return [];
    const of = <T>(value: (a: RecordedAttempt) => T) => attempts.map(value);
    const rows = await this.database.run(RECORD, [
      of((a) => a.deliveryId),
      of((a) => a.claimedBy),
      of((a) => a.outcome),
      of((a) => a.retryInSeconds ?? 0),
      of((a) => a.at),
      of((a) => a.httpStatus ?? null),
      of((a) => Math.max(0, Math.round(a.durationMs))),
      of((a) => a.error ?? null),
      of((a) => a.responseBody ?? null),
      of((a) => (a.outcome === 'GONE' ? `410 Gone answered at ${a.at.toISOString()}` : null)),
    ]);
    return rows.map((r) => r.endpointId);
  }

  /** Releases claims not attempted; answers how many. */
  async release(deliveryIds: readonly string[], claims: readonly string[]): Promise<number> {
    if (deliveryIds.length === 0) return 0;
    return (await this.database.runCounted(RELEASE, [deliveryIds, claims])).count;
  }
}
