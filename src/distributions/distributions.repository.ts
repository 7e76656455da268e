import type { PageRequest } from '../common/pagination';
import { keysetPage, withinPeriod } from '../database/list-queries';
import { TRANSACTION_LIMITS } from '../database/transaction-limits';
import { markInterruptedUnknown } from '../database/interrupted-work';
import { isUniqueViolation } from '../database/unique-violation';
import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import type { DistributionKind as DbDistributionKind, DistributionStatus as DbDistributionStatus } from '../generated/prisma/enums';
import type { Proven, SameValues } from '../database/same-values';
import { PrismaService } from '../database/prisma.service';
import { linkIdempotentResource } from '../idempotency/idempotency.repository';
import { appendAuditEvent } from '../audit/audit.repository';
import type { NewAuditEvent } from '../audit/audit.types';
import type {
  DistributionFilter,
  DistributionKind,
  DistributionOutcome,
  DistributionRecord,
  DistributionStatus,
  NewDistribution,
} from './distribution.types';

/** The unions of distribution.types.ts are the database enums, value for value: the rows are mapped without casts. */
export type DistributionEnumsMatch = [
  Proven<SameValues<DistributionKind, DbDistributionKind>>,
  Proven<SameValues<DistributionStatus, DbDistributionStatus>>,
];

type DistributionRow = Prisma.DistributionGetPayload<{ include: { shares: true } }>;
const WITH_SHARES = { shares: { orderBy: { position: 'asc' } } } as const;
/** The resource type of a distribution on its idempotency record. */
export const DISTRIBUTION_RESOURCE = 'distribution';

/** Distributions and their shares. The only Prisma user of the area. */
@Injectable()
export class DistributionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Stores the distribution PENDING with every share, in one transaction, before anything is
   * sent. `undefined` when its paymentId is already taken (the unique index decided). With
   * `idempotencyRecordId`, that record is linked to the distribution in the same transaction, so
   * that a retry after a crash finds it (see linkIdempotentResource).
   */
  async createPending(distribution: NewDistribution, idempotencyRecordId?: string): Promise<DistributionRecord | undefined> {
    const create = (client: Prisma.TransactionClient) =>
      client.distribution.create({
        data: {
          kind: distribution.kind,
          createdBy: distribution.createdBy,
          paymentReceiver: distribution.paymentReceiver,
          paymentId: distribution.paymentId,
          payer: distribution.payer,
          amount: distribution.amount,
          currency: distribution.currency,
          status: 'PENDING',
          receiverShareMinor: distribution.receiverShareMinor,
          providerRequest: distribution.providerRequest as Prisma.InputJsonValue,
          shares: {
            create: distribution.shares.map((share) => ({
              position: share.position,
              matricule: share.matricule,
              rate: share.rate,
              shareMinor: share.shareMinor,
            })),
          },
        },
        include: WITH_SHARES,
      });
    try {
      const row = idempotencyRecordId
        ? await this.prisma.$transaction(async (tx) => {
            const created = await create(tx);
            await linkIdempotentResource(tx, idempotencyRecordId, { type: DISTRIBUTION_RESOURCE, id: created.id });
            return created;
          }, TRANSACTION_LIMITS)
        : await create(this.prisma);
      return toRecord(row);
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  async findByPaymentId(paymentId: string): Promise<DistributionRecord | undefined> {
    const row = await this.prisma.distribution.findUnique({ where: { paymentId }, include: WITH_SHARES });
    return row ? toRecord(row) : undefined;
  }

  /**
   * Distributions still PENDING long after they were handed to the provider: the process died
   * between the call and the write. They become UNKNOWN (it may have happened), visibly.
   */
  async markInterruptedUnknown(olderThanSeconds: number): Promise<number> {
    return markInterruptedUnknown(this.prisma, 'distributions', olderThanSeconds);
  }

  /** Records the provider's answer on a PENDING distribution (only PENDING moves). */
  async recordOutcome(id: string, outcome: DistributionOutcome, audit?: NewAuditEvent): Promise<DistributionRecord> {
    return this.prisma.$transaction(async (tx) => {
      if (audit) await appendAuditEvent(tx, audit);
      await tx.distribution.updateMany({
        where: { id, status: 'PENDING' },
        data: {
          status: outcome.status,
          providerMessage: outcome.providerMessage,
          failureReason: outcome.status === 'ACCEPTED' ? null : outcome.failureReason,
          providerResponse: outcome.providerResponse ?? Prisma.DbNull,
          completedAt: new Date(),
        },
      });
      return toRecord(await tx.distribution.findUniqueOrThrow({ where: { id }, include: WITH_SHARES }));
    }, TRANSACTION_LIMITS);
  }

  /** Removes a PENDING distribution that provably never reached the provider, freeing its paymentId. */
  async deletePending(id: string): Promise<void> {
    await this.prisma.distribution.deleteMany({ where: { id, status: 'PENDING' } });
  }

  async findById(id: string): Promise<DistributionRecord | undefined> {
    const row = await this.prisma.distribution.findUnique({ where: { id }, include: WITH_SHARES });
    return row ? toRecord(row) : undefined;
  }

  async list(filter: DistributionFilter, page: PageRequest): Promise<DistributionRecord[]> {
    const where: Prisma.DistributionWhereInput = {
      ...(filter.kind ? { kind: filter.kind } : {}),
      ...(filter.status ? { status: filter.status } : {}),
      ...withinPeriod('createdAt', filter),
    };
    const rows = await this.prisma.distribution.findMany({ ...keysetPage('createdAt', where, page), include: WITH_SHARES });
    return rows.map(toRecord);
  }

  /**
   * A person decides an UNKNOWN distribution. Guarded (only UNKNOWN moves), so that two decisions
   * never both apply; the audit event commits with it.
   */
  async resolveUnknown(
    id: string,
    resolution: { status: 'ACCEPTED' | 'REJECTED'; actor: string; note: string },
    audit: NewAuditEvent,
  ): Promise<DistributionRecord | undefined> {
    return this.prisma.$transaction(async (tx) => {
      const failureReason =
        resolution.status === 'REJECTED' ? 'Decided REJECTED by a person after checking with the provider (manual resolution)' : null;
      const moved = await tx.$queryRaw<{ id: string }[]>`
        UPDATE distributions SET status = ${resolution.status}::"DistributionStatus", failure_reason = ${failureReason},
          resolved_by = ${resolution.actor}, resolution_note = ${resolution.note}, resolved_at = now()
        WHERE id = ${id}::uuid AND status = 'UNKNOWN'
        RETURNING id::text AS id`;
      if (moved.length === 0) return undefined;
      await appendAuditEvent(tx, { ...audit, details: { ...audit.details, fromStatus: 'UNKNOWN', toStatus: resolution.status } });
      return toRecord(await tx.distribution.findUniqueOrThrow({ where: { id }, include: WITH_SHARES }));
    }, TRANSACTION_LIMITS);
  }
}

function toRecord(row: DistributionRow): DistributionRecord {
  return {
    id: row.id,
    kind: row.kind,
    createdBy: row.createdBy,
    paymentReceiver: row.paymentReceiver,
    paymentId: row.paymentId,
    payer: row.payer,
    amount: row.amount.toFixed(),
    currency: row.currency,
    status: row.status,
    providerMessage: row.providerMessage,
    failureReason: row.failureReason,
    providerRequest: row.providerRequest,
    providerResponse: row.providerResponse,
    receiverShareMinor: row.receiverShareMinor,
    createdAt: row.createdAt,
    completedAt: row.completedAt,
    shares: row.shares.map((share) => ({
      position: share.position,
      matricule: share.matricule,
      rate: share.rate.toFixed(),
      shareMinor: share.shareMinor,
    })),
  };
}
