import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import { ReplicaReads } from '../database/replica-reads.service';
import { column, sqlStatement, type StatementRow } from '../database/sql-statement';

/** The SQL of ReportsRepository and AttentionRepository, written out (listed in src/queries/reports.repository.sql). */
const repository = 'reports.repository';

export interface SummaryRow {
  status: string;
  currency: string;
  count: number;
  /** Exact decimal sum, as PostgreSQL computed it (numeric, no float). */
  total: string;
}

/** Count and exact total per status and currency of the orders created in [$1, $2) (an absent bound is an infinite one). */
const ORDER_SUMMARY = sqlStatement(
  repository,
  'orderSummary',
  'reports_order_summary',
  `
  SELECT status::text AS status, currency::text AS currency, count(*)::int AS count, sum(amount)::text AS total
  FROM orders
  WHERE created_at >= $1::timestamptz AND created_at < $2::timestamptz
  GROUP BY status, currency
  ORDER BY currency, status`,
  { status: column.text, currency: column.text, count: column.int4, total: column.text },
);

@Injectable()
export class ReportsRepository {
  constructor(private readonly financeReads: ReplicaReads) {}

  /** A finance read: on the replica while it is fresh. */
  async orderSummary(from?: Date, to?: Date): Promise<SummaryRow[]> {
    return this.financeReads.run(ORDER_SUMMARY, [from ?? '-infinity', to ?? 'infinity']);
  }
}

/** One queue of the attention report: how many wait, and the oldest of them. */
export interface AttentionQueue<T> {
  count: number;
  oldest: T[];
}

export interface AttentionOrderRow {
  id: string;
  reference: string;
  status: string;
  amount: string;
  currency: string;
  needsReview: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface AttentionCardOperationRow {
  id: string;
  kind: string;
  cardId: string | null;
  cardUserId: string;
  amount: string | null;
  currency: string | null;
  failureReason: string | null;
  createdAt: Date;
}

export interface AttentionDistributionRow {
  id: string;
  kind: string;
  amount: string;
  currency: string;
  failureReason: string | null;
  createdAt: Date;
}

export interface AttentionRows {
  orders: {
    unknown: AttentionQueue<AttentionOrderRow>;
    expired: AttentionQueue<AttentionOrderRow>;
    stalePending: AttentionQueue<AttentionOrderRow>;
    needsReview: AttentionQueue<AttentionOrderRow>;
  };
  cardOperations: { unknown: AttentionQueue<AttentionCardOperationRow> };
  distributions: { unknown: AttentionQueue<AttentionDistributionRow> };
}

/**
 * The size of every queue, each counted on its index, and the stale-pending window's bound ($1
 * seconds before now, by the database clock like the sweep and the resolution guard), which the
 * rows of that queue are then read with: its count and its rows apply the same bound.
 */
const ATTENTION_COUNTS = sqlStatement(
  repository,
  'attention',
  'reports_attention_counts',
  `
  SELECT now() - make_interval(secs => $1::float8) AS "stalePendingBefore",
    (SELECT count(*)::int FROM orders WHERE status = 'UNKNOWN') AS "ordersUnknown",
    (SELECT count(*)::int FROM orders WHERE status = 'EXPIRED') AS "ordersExpired",
    (SELECT count(*)::int FROM orders WHERE status = 'PENDING' AND created_at < now() - make_interval(secs => $1::float8)) AS "ordersStalePending",
    (SELECT count(*)::int FROM orders WHERE needs_review = true) AS "ordersNeedsReview",
    (SELECT count(*)::int FROM card_operations WHERE status = 'UNKNOWN') AS "cardOperationsUnknown",
    (SELECT count(*)::int FROM distributions WHERE status = 'UNKNOWN') AS "distributionsUnknown"`,
  {
    stalePendingBefore: column.timestamptz,
    ordersUnknown: column.int4,
    ordersExpired: column.int4,
    ordersStalePending: column.int4,
    ordersNeedsReview: column.int4,
    cardOperationsUnknown: column.int4,
    distributionsUnknown: column.int4,
  },
);

/** The queues of orders, by the name each row carries in `queue`. */
type OrderQueueName = keyof AttentionRows['orders'];

/** The amount without the trailing zeros of numeric(24,4), as the reports showed it (Prisma's Decimal#toFixed). */
const orderQueue = (queue: OrderQueueName, where: string) => `
    (SELECT '${queue}' AS queue, id, reference, status::text AS status, trim_scale(amount)::text AS amount, currency::text AS currency,
       needs_review AS "needsReview", created_at AS "createdAt", updated_at AS "updatedAt"
     FROM orders WHERE ${where} ORDER BY created_at, id LIMIT $1::int)`;

/** The $1 oldest orders of each queue; $2 is the stale-pending bound ATTENTION_COUNTS answered. */
const ATTENTION_ORDERS = sqlStatement(
  repository,
  'attention',
  'reports_attention_orders',
  `
  SELECT q.queue, q.id, q.reference, q.status, q.amount, q.currency, q."needsReview", q."createdAt", q."updatedAt"
  FROM (${orderQueue('unknown', `status = 'UNKNOWN'`)}
    UNION ALL${orderQueue('expired', `status = 'EXPIRED'`)}
    UNION ALL${orderQueue('stalePending', `status = 'PENDING' AND created_at < $2::timestamptz`)}
    UNION ALL${orderQueue('needsReview', 'needs_review = true')}
  ) q
  ORDER BY q.queue, q."createdAt", q.id`,
  {
    queue: column.text,
    id: column.uuid,
    reference: column.text,
    status: column.text,
    amount: column.text,
    currency: column.text,
    needsReview: column.bool,
    createdAt: column.timestamptz,
    updatedAt: column.timestamptz,
  },
);

/** The $1 oldest UNKNOWN card operations. */
const ATTENTION_CARD_OPERATIONS = sqlStatement(
  repository,
  'attention',
  'reports_attention_card_operations',
  `
  SELECT id, kind::text AS kind, card_id AS "cardId", card_user_id AS "cardUserId", trim_scale(amount)::text AS amount,
    currency::text AS currency, failure_reason AS "failureReason", created_at AS "createdAt"
  FROM card_operations WHERE status = 'UNKNOWN'
  ORDER BY created_at, id LIMIT $1::int`,
  {
    id: column.uuid,
    kind: column.text,
    cardId: column.uuid.orNull,
    cardUserId: column.uuid,
    amount: column.text.orNull,
    currency: column.text.orNull,
    failureReason: column.text.orNull,
    createdAt: column.timestamptz,
  },
);

/** The $1 oldest UNKNOWN distributions. */
const ATTENTION_DISTRIBUTIONS = sqlStatement(
  repository,
  'attention',
  'reports_attention_distributions',
  `
  SELECT id, kind::text AS kind, trim_scale(amount)::text AS amount, currency::text AS currency, failure_reason AS "failureReason",
    created_at AS "createdAt"
  FROM distributions WHERE status = 'UNKNOWN'
  ORDER BY created_at, id LIMIT $1::int`,
  {
    id: column.uuid,
    kind: column.text,
    amount: column.text,
    currency: column.text,
    failureReason: column.text.orNull,
    createdAt: column.timestamptz,
  },
);

/**
 * For /metrics: per queue of the attention report, how many wait and how long the oldest has
 * waited (since its creation, by the database clock; 0 when none waits); and the PROCESSING orders
 * awaiting the provider's callback, since they were handed over. $1 is the stale-pending window in
 * seconds. A queue where nothing waits has no row.
 */
const WAITING_GAUGES = sqlStatement(
  repository,
  'waiting',
  'reports_waiting_gauges',
  `
  SELECT queue, count(*)::int AS items, extract(epoch FROM now() - min(since))::float8 AS "oldestAgeSeconds"
  FROM (
    SELECT 'orders_unknown' AS queue, created_at AS since FROM orders WHERE status = 'UNKNOWN'
    UNION ALL SELECT 'orders_expired', created_at FROM orders WHERE status = 'EXPIRED'
    UNION ALL SELECT 'orders_stale_pending', created_at FROM orders
      WHERE status = 'PENDING' AND created_at < now() - make_interval(secs => $1::float8)
    UNION ALL SELECT 'orders_needs_review', created_at FROM orders WHERE needs_review = true
    UNION ALL SELECT 'card_operations_unknown', created_at FROM card_operations WHERE status = 'UNKNOWN'
    UNION ALL SELECT 'distributions_unknown', created_at FROM distributions WHERE status = 'UNKNOWN'
    UNION ALL SELECT 'orders_awaiting_callback', coalesce(submitted_at, created_at) FROM orders WHERE status = 'PROCESSING'
  ) AS waiting
  GROUP BY queue`,
  { queue: column.text, items: column.int4, oldestAgeSeconds: column.float8 },
);

export type WaitingRow = StatementRow<typeof WAITING_GAUGES>;

/**
 * What waits for a person, oldest first. Each queue is one filter served by an index on
 * (filter, created_at, id), read backwards: counting and the first rows never scan the table.
 */
@Injectable()
export class AttentionRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly financeReads: ReplicaReads,
  ) {}

  /** A finance read: on the replica while it is fresh. */
  async attention(limit: number, stalePendingSeconds: number): Promise<AttentionRows> {
    const [counts] = await this.financeReads.run(ATTENTION_COUNTS, [stalePendingSeconds]);
    const [orders, operations, distributions] = await Promise.all([
      this.financeReads.run(ATTENTION_ORDERS, [limit, counts.stalePendingBefore]),
      this.financeReads.run(ATTENTION_CARD_OPERATIONS, [limit]),
      this.financeReads.run(ATTENTION_DISTRIBUTIONS, [limit]),
    ]);
    const orderQueue = (queue: OrderQueueName, count: number): AttentionQueue<AttentionOrderRow> => ({
      count,
      oldest: orders.filter((row) => row.queue === queue).map(toOrderRow),
    });
    return {
      orders: {
        unknown: orderQueue('unknown', counts.ordersUnknown),
        expired: orderQueue('expired', counts.ordersExpired),
        stalePending: orderQueue('stalePending', counts.ordersStalePending),
        needsReview: orderQueue('needsReview', counts.ordersNeedsReview),
      },
      cardOperations: { unknown: { count: counts.cardOperationsUnknown, oldest: operations } },
      distributions: { unknown: { count: counts.distributionsUnknown, oldest: distributions } },
    };
  }

  /** Each attention queue's size and oldest age, and the oldest wait for a callback (WAITING_GAUGES): on the primary, alerts see what is. */
  async waiting(stalePendingSeconds: number): Promise<WaitingRow[]> {
    return this.prisma.run(WAITING_GAUGES, [stalePendingSeconds]);
  }
}

/** The row without the name of its queue (the report shows every field of a row). */
function toOrderRow({ queue: _queue, ...row }: StatementRow<typeof ATTENTION_ORDERS>): AttentionOrderRow {
  return row;
}
