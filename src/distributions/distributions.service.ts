import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import { auditEventOf } from '../audit/audit.service';
import type { AuthUser } from '../auth/auth.types';
import { ConflictError, NotFoundError, ValidationFailedError, type FieldError } from '../common/domain-error';
import { Money, MoneyError } from '../common/money';
import { validateAmountForCurrency } from '../common/money.validator';
import { afterCursor, DEFAULT_PAGE_SIZE, periodOf, positionOf, toPage, UUID_PATTERN } from '../common/pagination';
import type { AppConfig } from '../config/app-config';
import { APP_LOGGER } from '../logging/logging.module';
import { redact } from '../logging/redaction';
import { DistributionClient } from '../provider/clients/distribution.client';
import type { DistributionEntry, SuccessMessage } from '../provider/provider.types';
import { operationLink, registerRecoveries } from '../provider-operations/operation-recovery';
import { runProviderOperation, type ProviderOperationType } from '../provider-operations/provider-operation';
import { canonicalRate, computeShares, distributionListErrors, rateToProviderNumber } from './distribution-shares';
import type { DistributionFilter, DistributionOutcome, DistributionRecord, NewDistribution } from './distribution.types';
import type {
  CreateFiatDistributionDto,
  CreateInitDistributionDto,
  DistributionDto,
  DistributionEntryDto,
  DistributionPageDto,
  ListDistributionsQueryDto,
} from './distributions.dto';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { DistributionsRepository } from './distributions.repository';
import { DISTRIBUTION_RESOURCE, DISTRIBUTIONS_TABLE } from './distributions.table';
import { toDistributionDto } from './distribution-mappers';

/** A request checked and computed, ready to be stored and sent. */
interface Prepared {
  money: Money;
  providerAmount: number;
  providerDistribution: DistributionEntry[];
  shares: NewDistribution['shares'];
  remainder: bigint;
}

/** What a request asks: the distribution checked and computed, and who asked (its audit event's actor). */
interface DistributionRequest {
  user: AuthUser;
  distribution: NewDistribution;
}

@Injectable()
export class DistributionsService implements OnModuleInit {
  private readonly currencies: AppConfig['currencies'];
  private readonly reportsTimeZone: string;

  /**
   * Distributions as the provider-operation lifecycle drives them: stored PENDING with their shares
   * (a paymentId already used is 409 before anything is sent), REJECTED when refused, UNKNOWN when
   * the answer was lost, removed when provably not sent (the paymentId is free again and the
   * provider error is the answer); every recorded outcome is audited (`distribution.created`).
   */
  private readonly type: ProviderOperationType<DistributionRecord, DistributionRequest, DistributionRecord, DistributionOutcome['status']>;

  constructor(
    private readonly distributions: DistributionsRepository,
    private readonly client: DistributionClient,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
    private readonly idempotency: IdempotencyService,
  ) {
    this.currencies = config.get('currencies', { infer: true });
    this.reportsTimeZone = config.get('reportsTimeZone', { infer: true });
    this.type = {
      name: 'distribution',
      table: DISTRIBUTIONS_TABLE,
      log: logger,
      describe: (distribution) => ({ distributionId: distribution.id, kind: distribution.kind }),
      store: async ({ distribution }, link) => {
        const stored = await this.distributions.createPending(distribution, link);
        if (stored) return stored;
        if (!distribution.paymentId) throw new Error('a fiat distribution has no unique field to collide on');
        const existing = await this.distributions.findByPaymentId(distribution.paymentId);
        throw new ConflictError(
          'distribution_payment_id_exists',
          `paymentId ${distribution.paymentId} is already used${existing ? ` by distribution ${existing.id}` : ''}.`,
        );
      },
      recordFailure: (stored, outcome, _failure, { user }) => this.record(user, stored, outcome),
      removeNotSent: (stored) => this.distributions.deletePending(stored.id),
      answerFailure: (recorded) => recorded,
    };
  }

  onModuleInit() {
    // A retry of a distribution whose request died answers the distribution as it is now (UNKNOWN once swept).
    registerRecoveries(this.idempotency, DISTRIBUTIONS_TABLE, {
      [DISTRIBUTION_RESOURCE]: async (id: string) => {
        const distribution = await this.distributions.findById(id);
        return distribution && this.toDto(distribution);
      },
    });
  }

  /** `POST {link_base_url}/api/agent/link/init`: a payment prepared for redistribution; paymentId used once. */
  async createInit(user: AuthUser, dto: CreateInitDistributionDto): Promise<DistributionDto> {
    const prepared = this.prepare(dto);
    const body = {
      payment_receiver: dto.paymentReceiver,
      payment_id: dto.paymentId,
      amount: prepared.providerAmount,
      distribution: prepared.providerDistribution,
    };
    return this.submit(
      user,
      {
        kind: 'init',
        createdBy: user.id,
        paymentReceiver: dto.paymentReceiver,
        paymentId: dto.paymentId,
        payer: null,
        amount: prepared.money.toString(),
        currency: dto.currency,
        receiverShareMinor: prepared.remainder,
        providerRequest: redact(body),
        shares: prepared.shares,
      },
      () => this.client.initTransaction(body),
    );
  }

  /** `POST {link_base_url}/api/agent/link/fiat-distribution`: a fiat payment received elsewhere, redistributed. */
  async createFiat(user: AuthUser, dto: CreateFiatDistributionDto): Promise<DistributionDto> {
    const prepared = this.prepare(dto);
    const body = {
      data: { payer: dto.payer, currency: dto.currency, amount: prepared.providerAmount, distribution: prepared.providerDistribution },
    };
    return this.submit(
      user,
      {
        kind: 'fiat',
        createdBy: user.id,
        paymentReceiver: null,
        paymentId: null,
        payer: dto.payer,
        amount: prepared.money.toString(),
        currency: dto.currency,
        receiverShareMinor: null,
        providerRequest: redact(body),
        shares: prepared.shares,
      },
      () => this.client.distributeFiat(body),
    );
  }

  async get(id: string): Promise<DistributionDto> {
    const distribution = UUID_PATTERN.test(id) ? await this.distributions.findById(id) : undefined;
    if (!distribution) throw new NotFoundError(`No distribution ${id}.`);
    return this.toDto(distribution);
  }

  async list(query: ListDistributionsQueryDto): Promise<DistributionPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const filter: DistributionFilter = {
      kind: query.kind,
      status: query.status,
      ...periodOf(query, this.reportsTimeZone),
    };
    const rows = await this.distributions.list(filter, { limit: limit + 1, after: afterCursor(query.cursor) });
    return toPage(rows, limit, positionOf, (d) => this.toDto(d));
  }

  /**
   * Every rule at once, as field errors: the amount for its currency, each matricule once, the
   * rates' sum. Then the exact shares, in minor units, and the exact JSON numbers for the provider.
   */
  private prepare(dto: { amount: string | number; currency: string; distribution: DistributionEntryDto[] }): Prepared {
    const errors: FieldError[] = [];
    const checked = validateAmountForCurrency(dto.amount, dto.currency, this.currencies);
    if ('errors' in checked) errors.push(...checked.errors);
    errors.push(...distributionListErrors(dto.distribution));
    let providerAmount = 0;
    if ('money' in checked) {
      try {
        providerAmount = checked.money.toProviderNumber();
      } catch (error) {
        if (!(error instanceof MoneyError)) throw error;
        errors.push({ field: 'amount', message: 'amount cannot be sent to the provider exactly' });
      }
    }
    if (errors.length > 0 || !('money' in checked)) throw new ValidationFailedError(errors);

    const rates = dto.distribution.map((entry) => canonicalRate(entry.rate));
    const { shares, remainder } = computeShares(checked.money.minor, rates);
    return {
      money: checked.money,
      providerAmount,
      providerDistribution: dto.distribution.map((entry, index) => ({
        matricule: entry.matricule,
        rate: rateToProviderNumber(rates[index]),
      })),
      shares: dto.distribution.map((entry, index) => ({
        position: index + 1,
        matricule: entry.matricule,
        rate: rates[index],
        shareMinor: shares[index],
      })),
      remainder,
    };
  }

  /**
   * Stores the distribution and sends it (runProviderOperation), then records what the answer did:
   * ACCEPTED, REJECTED (a refusal: nothing happened there) or UNKNOWN (timeout, 5xx, lost or
   * unreadable answer: it may have happened, so it is never resent). An error proving nothing was
   * sent (budget spent, provider unreachable, our credentials refused) removes the PENDING record,
   * freeing its paymentId, and is the caller's answer (the idempotency key is released too).
   */
  private async submit(user: AuthUser, distribution: NewDistribution, send: () => Promise<SuccessMessage>): Promise<DistributionDto> {
    const recorded = await runProviderOperation(this.type, {
      input: { user, distribution },
      link: operationLink(this.idempotency, DISTRIBUTIONS_TABLE, DISTRIBUTION_RESOURCE),
      call: send,
      record: (stored, answer) =>
        this.record(
          user,
          stored,
          answer?.success === true
            ? { status: 'ACCEPTED', providerMessage: messageOf(answer), providerResponse: redact(answer) }
            : {
                status: 'UNKNOWN',
                failureReason: 'The provider answered without success: true',
                providerMessage: messageOf(answer),
                providerResponse: redact(answer),
              },
        ),
    });
    this.logger.info({ distributionId: recorded.id, kind: recorded.kind, status: recorded.status }, 'distribution recorded');
    return this.toDto(recorded);
  }

  /** The outcome, with its audit event. */
  private record(user: AuthUser, stored: DistributionRecord, outcome: DistributionOutcome): Promise<DistributionRecord> {
    const created = { kind: stored.kind, status: outcome.status, amount: stored.amount, currency: stored.currency };
    return this.distributions.recordOutcome(
      stored.id,
      outcome,
      auditEventOf(user, 'distribution.created', { type: 'distribution', id: stored.id }, { details: created }),
    );
  }

  private toDto(distribution: DistributionRecord): DistributionDto {
    return toDistributionDto(distribution, this.currencies);
  }
}

function messageOf(answer: unknown): string | null {
  const message = (answer as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.slice(0, 500) : null;
}
