import { Inject, Injectable } from '@nestjs/common';
import type { PageRequest } from '../common/pagination';
import { ADVISORY_LOCKS, tryTransactionLock } from '../database/advisory-locks';
import { keysetListStatementFor, keysetListStatements, keysetListValues, type ListFilter } from '../database/list-queries';
import { Database } from '../database/database';
import { ReplicaReads } from '../database/replica-reads.service';
import { column, sqlStatement, type RowOf } from '../database/sql-statement';
import { PURGE_STATEMENT_TIMEOUT_MS } from '../database/transaction-limits';
import { CALLBACK_RESULTS, ORDER_CALLBACKS, type OrderCallbacks } from '../orders/order-callbacks.port';
import { decideCallback } from './callback-decision';
import type { CallbackRecord, CallbackResult, IncomingCallback, StoredCallback } from './callback.types';

/** The SQL of CallbacksRepository, written out (listed in src/queries/callbacks.repository.sql). */
const repository = 'callbacks.repository';

export interface CallbackFilter {
  orderId?: string;
  outcome?: string;
  result?: CallbackResult;
  from?: Date;
  to?: Date;
}

/** A stored callback; `result` is the database enum, whose labels are CALLBACK_RESULTS (checked by the statement shapes test). */
const CALLBACK_COLUMNS = {
  id: column.uuid,
  orderId: column.uuid.orNull,
  pathOrderId: column.text,
  outcome: column.text,
  result: column.enum('CallbackResult', CALLBACK_RESULTS),
  method: column.text,
  query: column.jsonb,
  headers: column.jsonb,
  contentType: column.text.orNull,
  rawBody: column.text.orNull,
  remoteIp: column.text.orNull,
  requestId: column.text.orNull,
  receivedAt: column.timestamptz,
};
const SELECT = (p: string) =>
  `${p}.id, ${p}.order_id AS "orderId", ${p}.path_order_id AS "pathOrderId", ${p}.outcome, ${p}.result, ${p}.method, ${p}.query,
  ${p}.headers, ${p}.content_type AS "contentType", ${p}.raw_body AS "rawBody", ${p}.remote_ip AS "remoteIp",
  ${p}.request_id AS "requestId", ${p}.received_at AS "receivedAt"`;

/** Stores a callback, in the transaction that locked its order (when its token proved one). */
const STORE = sqlStatement(
  repository,
  'storeAndApply',
  'callbacks_store',
  `
  INSERT INTO provider_callbacks AS p (id, order_id, path_order_id, outcome, result, method, query, headers, content_type, raw_body,
                                       remote_ip, request_id, received_at)
  VALUES (gen_random_uuid(), $1::uuid, $2::text, $3::text, $4::"CallbackResult", $5::text, $6::jsonb, $7::jsonb, $8::text, $9::text,
          $10::text, $11::text, now())
  RETURNING ${SELECT('p')}`,
  CALLBACK_COLUMNS,
);

const LIST_FILTERS: readonly ListFilter<CallbackFilter>[] = [
  ['orderId', 'order', (n) => `p.order_id = $${n}::uuid`],
  ['outcome', 'outcome', (n) => `p.outcome = $${n}::text`],
  ['result', 'result', (n) => `p.result = $${n}::"CallbackResult"`],
];
const LIST = keysetListStatements({
  repository,
  usedBy: 'list',
  prefix: 'callbacks_page',
  from: 'provider_callbacks p',
  time: 'p.received_at',
  select: SELECT('p'),
  columns: CALLBACK_COLUMNS,
  filters: LIST_FILTERS,
});

/** The purge's batch: REJECTED callbacks older than $1 days that reached no order, at most $2 of them. */
const PURGE_REJECTED = sqlStatement(
  repository,
  'tryPurgeRejectedAsLeader',
  'callbacks_purge_rejected',
  `
  DELETE FROM provider_callbacks WHERE id IN (
    SELECT id FROM provider_callbacks
    WHERE result = 'REJECTED' AND order_id IS NULL AND received_at < now() - make_interval(days => $1::int)
    LIMIT $2::int)`,
);

/** The stored callbacks: written together with what they do to their order, read, and purged. */
@Injectable()
export class CallbacksRepository {
  constructor(
    private readonly database: Database,
    private readonly financeReads: ReplicaReads,
    @Inject(ORDER_CALLBACKS) private readonly orders: OrderCallbacks,
  ) {}

  /**
   * Stores the callback and applies what it decides to its order, in one transaction with the
   * order locked: a callback is never stored without its effect, nor applied without its record.
   */
  async storeAndApply(incoming: IncomingCallback): Promise<StoredCallback> {
    return this.database.inTransaction(async (run) => {
      const order = incoming.verified ? await this.orders.lockForCallback(run, incoming.verified.orderId) : undefined;
      const decision = decideCallback(order?.status, incoming.verified?.outcome);
      const {
        rows: [callback],
      } = await run(STORE, [
        order?.id ?? null,
        incoming.pathOrderId.slice(0, 100),
        incoming.outcome.slice(0, 20),
        decision.result,
        incoming.method,
        JSON.stringify(incoming.query ?? {}),
        JSON.stringify(incoming.headers ?? {}),
        incoming.contentType,
        incoming.rawBody,
        incoming.remoteIp,
        incoming.requestId,
      ]);
      if (!order || !decision.transition) return { callback: toCallback(callback) };
      return {
        callback: toCallback(callback),
        event: await this.orders.applyCallbackTransition(run, order, decision.transition, callback.id),
      };
    });
  }

  /** A finance read: on the replica while it is fresh. */
  async list(filter: CallbackFilter, page: PageRequest): Promise<CallbackRecord[]> {
    const rows = await this.financeReads.run(
      keysetListStatementFor(LIST, LIST_FILTERS, filter),
      keysetListValues(LIST_FILTERS, filter, page),
    );
    return rows.map(toCallback);
  }

  /**
   * Deletes up to `batchSize` REJECTED callbacks older than `olderThanDays`, unless another
   * instance is purging right now (transaction-scoped advisory lock, taken without waiting).
   * Callbacks that reached an order are never purged: they are the order's evidence.
   */
  async tryPurgeRejectedAsLeader(olderThanDays: number, batchSize: number): Promise<{ leader: boolean; purged: number }> {
    return this.database.inTransaction(
      async (run) => {
        if (!(await tryTransactionLock(run, ADVISORY_LOCKS.rejectedCallbackPurge))) return { leader: false, purged: 0 };
        return { leader: true, purged: (await run(PURGE_REJECTED, [olderThanDays, batchSize])).count };
      },
      { statementTimeoutMs: PURGE_STATEMENT_TIMEOUT_MS },
    );
  }
}

function toCallback(row: RowOf<typeof CALLBACK_COLUMNS>): CallbackRecord {
  return row;
}
