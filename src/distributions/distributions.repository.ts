import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { appendAuditEvent } from '../audit/audit.repository';
import type { NewAuditEvent } from '../audit/audit.types';
import type { PageRequest } from '../common/pagination';
import { keysetListStatementFor, keysetListStatements, keysetListValues, type ListFilter } from '../database/list-queries';
import { Database } from '../database/database';
import { ReplicaReads } from '../database/replica-reads.service';
import type { Proven, SameValues } from '../database/same-values';
import { parameterValues } from '../database/named-parameters';
import { sqlStatement } from '../database/sql-statement';
import { isUniqueViolation } from '../database/unique-violation';
import type { DistributionKind as DbDistributionKind, DistributionStatus as DbDistributionStatus } from '../generated/prisma/enums';
import { LINK_HELD, linkedInsertValues, OPERATION_LINK, storedRow, type OperationLink } from '../provider-operations/operation-tables';
import { resolveProviderOperation, type ManualDecision } from '../provider-operations/resolve-provider-operation';
import { DISTRIBUTIONS_TABLE } from './distributions.table';
import { DISTRIBUTION_ROW, NEW_DISTRIBUTION, newDistributionValues, STORED_DISTRIBUTION_ROW } from './distributions.rows';
import {
  type ManualDistributionOutcome,
  type DistributionFilter,
  type DistributionKind,
  type DistributionOutcome,
  type DistributionRecord,
  type DistributionStatus,
  type NewDistribution,
} from './distribution.types';

/** The unions of distribution.types.ts are the database enums, value for value (the statements' enum columns check the labels too). */
export type DistributionEnumsMatch = [
  Proven<SameValues<DistributionKind, DbDistributionKind>>,
  Proven<SameValues<DistributionStatus, DbDistributionStatus>>,
];

/** Distributions follow the provider-operation lifecycle: declared once, in distributions.table.ts. */
export { DISTRIBUTION_RESOURCE, DISTRIBUTIONS_TABLE } from './distributions.table';

/** The SQL of DistributionsRepository, written out (listed in src/queries/distributions.repository.sql). */
const repository = 'distributions.repository';

/** A distribution stored PENDING with every share, linked to the request's idempotency record ($1 to $10) in the same statement. */
const p = NEW_DISTRIBUTION;
const CREATE_PENDING = sqlStatement(
  repository,
  'createPending',
  'distributions_create',
  `
  WITH ${OPERATION_LINK}, d AS (
    INSERT INTO distributions (id, kind, created_by, payment_receiver, payment_id, payer, amount, currency, status, receiver_share_minor,
      provider_request, created_at)
    SELECT $1::uuid, ${p.kind}, ${p.createdBy}, ${p.paymentReceiver}, ${p.paymentId}, ${p.payer}, ${p.amount}, ${p.currency}, 'PENDING',
      ${p.receiverShareMinor}, ${p.providerRequest}, now()
    WHERE ${LINK_HELD}
    RETURNING *
  ), shares AS (
    INSERT INTO distribution_shares (distribution_id, position, matricule, rate, share_minor)
    SELECT d.id, x.position, x.matricule, x.rate, x.share_minor
    FROM d CROSS JOIN unnest(${p.positions}, ${p.matricules}, ${p.rates}, ${p.shareMinors}) AS x(position, matricule, rate, share_minor)
    RETURNING *
  )
  SELECT ${STORED_DISTRIBUTION_ROW.select('d')} FROM d`,
  STORED_DISTRIBUTION_ROW.columns,
);

const FIND_BY_ID = sqlStatement(
  repository,
  'findById',
  'distributions_find',
  `
  SELECT ${DISTRIBUTION_ROW.select('d')} FROM distributions d WHERE d.id = $1::uuid`,
  DISTRIBUTION_ROW.columns,
);

const FIND_BY_PAYMENT_ID = sqlStatement(
  repository,
  'findByPaymentId',
  'distributions_find_by_payment_id',
  `
  SELECT ${DISTRIBUTION_ROW.select('d')} FROM distributions d WHERE d.payment_id = $1::text`,
  DISTRIBUTION_ROW.columns,
);

/** The provider's answer ($2 on) on a PENDING distribution (only PENDING moves); the distribution as it is now either way. */
const RECORD_OUTCOME = sqlStatement(
  repository,
  'recordOutcome',
  'distributions_record_outcome',
  `
  WITH d AS (
    UPDATE distributions
    SET status = $2::"DistributionStatus", provider_message = $3::text, failure_reason = $4::text, provider_response = $5::jsonb,
      completed_at = now()
    WHERE id = $1::uuid AND status = 'PENDING'
    RETURNING *
  )
  SELECT ${DISTRIBUTION_ROW.select('d')} FROM d
  UNION ALL
  SELECT ${DISTRIBUTION_ROW.select('n')} FROM distributions n WHERE n.id = $1::uuid AND NOT EXISTS (SELECT 1 FROM d)`,
  DISTRIBUTION_ROW.columns,
);

const DELETE_PENDING = sqlStatement(
  repository,
  'deletePending',
  'distributions_delete_pending',
  `
  DELETE FROM distributions WHERE id = $1::uuid AND status = 'PENDING'`,
);

const LIST_FILTERS: readonly ListFilter<DistributionFilter>[] = [
  ['kind', 'kind', (n) => `d.kind = $${n}::"DistributionKind"`],
  ['status', 'status', (n) => `d.status = $${n}::"DistributionStatus"`],
];
const LIST = keysetListStatements({
  repository,
  usedBy: 'list',
  prefix: 'distributions_page',
  from: 'distributions d',
  time: 'd.created_at',
  select: DISTRIBUTION_ROW.select('d'),
  columns: DISTRIBUTION_ROW.columns,
  filters: LIST_FILTERS,
});

/** Distributions and their shares: the only place of this area that reaches PostgreSQL. */
@Injectable()
export class DistributionsRepository {
  constructor(
    private readonly database: Database,
    private readonly financeReads: ReplicaReads,
  ) {}

  /**
   * Stores the distribution PENDING with every share, in one statement, before anything is sent.
   * `undefined` when its paymentId is already taken (the unique index decided). With `link`, the
   * request's idempotency record is linked to the distribution in the same statement, so that a
   * retry after a crash finds it (409 idempotency_in_progress, nothing stored, when a retry holds
   * the record already).
   */
  async createPending(distribution: NewDistribution, link?: OperationLink): Promise<DistributionRecord | undefined> {
    try {
      const rows = await this.database.run(CREATE_PENDING, [
        ...linkedInsertValues(randomUUID(), link),
        ...parameterValues(NEW_DISTRIBUTION, newDistributionValues(distribution)),
      ]);
      return STORED_DISTRIBUTION_ROW.read(storedRow(rows));
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  async findByPaymentId(paymentId: string): Promise<DistributionRecord | undefined> {
    const [row] = await this.database.run(FIND_BY_PAYMENT_ID, [paymentId]);
    return row && DISTRIBUTION_ROW.read(row);
  }

  /** Records the provider's answer on a PENDING distribution (only PENDING moves), with its audit event when given. */
  async recordOutcome(id: string, outcome: DistributionOutcome, audit?: NewAuditEvent): Promise<DistributionRecord> {
    const values = [
      id,
      outcome.status,
      outcome.providerMessage,
      outcome.status === 'ACCEPTED' ? null : outcome.failureReason,
      outcome.providerResponse === undefined || outcome.providerResponse === null ? null : JSON.stringify(outcome.providerResponse),
    ];
    const row = await this.database.inTransaction(async (run) => {
      if (audit) await appendAuditEvent(run, audit);
      return (await run(RECORD_OUTCOME, values)).rows[0];
    });
    if (!row) throw new Error(`distribution ${id} vanished`);
    return DISTRIBUTION_ROW.read(row);
  }

  /** Removes a PENDING distribution that provably never reached the provider, freeing its paymentId. */
  async deletePending(id: string): Promise<void> {
    await this.database.run(DELETE_PENDING, [id]);
  }

  async findById(id: string): Promise<DistributionRecord | undefined> {
    const [row] = await this.database.run(FIND_BY_ID, [id]);
    return row && DISTRIBUTION_ROW.read(row);
  }

  /** A finance read: on the replica while it is fresh. */
  async list(filter: DistributionFilter, page: PageRequest): Promise<DistributionRecord[]> {
    const statement = keysetListStatementFor(LIST, LIST_FILTERS, filter);
    return (await this.financeReads.run(statement, keysetListValues(LIST_FILTERS, filter, page))).map(DISTRIBUTION_ROW.read);
  }

  /**
   * A person decides an UNKNOWN distribution (resolveProviderOperation: guarded, only UNKNOWN
   * moves, the audit event committed with it).
   */
  async resolveUnknown(
    id: string,
    resolution: ManualDecision<ManualDistributionOutcome>,
    audit: NewAuditEvent,
  ): Promise<DistributionRecord | undefined> {
    const moved = await resolveProviderOperation(this.database, DISTRIBUTIONS_TABLE, id, resolution, audit);
    return moved ? this.findById(id) : undefined;
  }
}
