import { Injectable, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { auditEventOf } from '../audit/audit.service';
import type { AuthUser } from '../auth/auth.types';
import { ValidationFailedError } from '../common/domain-error';
import { unsafeTextReason } from '../common/validation';
import type { AppConfig } from '../config/app-config';
import { MetricsService } from '../metrics/metrics.service';
import type { CustomerLimitDto, SetCustomerLimitDto } from './customer-limits.dto';
import { CustomerLimitsRepository, type CustomerShares } from './customer-limits.repository';

/** A subject is a token's `sub`, in the path: the router takes path parameters of at most 100 characters (414 beyond). */
export const SUBJECT_MAX_LENGTH = 100;
/** The metric reads the buckets at most this often, whatever the scrape rate (every instance scrapes the same rows). */
const SHARES_READ_EVERY_MS = 15_000;
/** The bands of the share a customer used, as the metric's `share_used` label (a fixed set: bounded cardinality). */
const SHARE_BANDS: readonly [keyof Omit<CustomerShares, 'highest'>, string][] = [
  ['belowHalf', 'below_50'],
  ['fromHalf', '50_to_80'],
  ['fromEightyPercent', '80_to_100'],
  ['atLimit', 'at_limit'],
];

/**
 * A customer's share of the provider budget: PROVIDER_CUSTOMER_HOURLY_LIMIT unless an admin set
 * the customer's own (0 blocks it; at most the whole budget). The budget itself is taken in
 * src/provider (agentBudgetTakeCte), which reads the override in the same statement.
 */
@Injectable()
export class CustomerLimitsService implements OnModuleInit {
  private readonly defaultLimit: number;
  private readonly agentHourlyLimit: number;

  constructor(
    private readonly limits: CustomerLimitsRepository,
    private readonly metrics: MetricsService,
    config: ConfigService<AppConfig, true>,
  ) {
    ({ customerHourlyLimit: this.defaultLimit, agentHourlyLimit: this.agentHourlyLimit } = config.get('provider', { infer: true }));
  }

  onModuleInit() {
    // Customers counted by band and the highest share: never a subject in a label (personal data, unbounded).
    this.metrics.gaugeRefreshedEvery(
      'provider_customer_budget_customers',
      'Customers with provider calls counted in the rolling hour, by the part of their hourly share used (all instances)',
      ['share_used'],
      SHARES_READ_EVERY_MS,
      async () => {
        const shares = await this.limits.shares(this.defaultLimit);
        return SHARE_BANDS.map(([band, label]) => ({ labels: { share_used: label }, value: shares[band] }));
      },
    );
    this.metrics.gaugeRefreshedEvery(
      'provider_customer_budget_highest_share',
      'The highest part of its hourly share of provider calls any customer used in the rolling hour (1: at its limit)',
      [],
      SHARES_READ_EVERY_MS,
      async () => [{ labels: {}, value: (await this.limits.shares(this.defaultLimit)).highest }],
    );
  }

  async get(subject: string): Promise<CustomerLimitDto> {
    checkSubject(subject);
    const { override, usedInLastHour } = await this.limits.find(subject);
    return {
      subject,
      providerCallsPerHour: override ?? this.defaultLimit,
      source: override === null ? 'default' : 'override',
      usedInLastHour,
    };
  }

  async set(user: AuthUser, subject: string, body: SetCustomerLimitDto): Promise<CustomerLimitDto> {
    checkSubject(subject);
    if (body.providerCallsPerHour > this.agentHourlyLimit) {
      throw new ValidationFailedError([
        {
          field: 'providerCallsPerHour',
          message: `providerCallsPerHour must not exceed the whole hourly budget (PROVIDER_AGENT_HOURLY_LIMIT, ${this.agentHourlyLimit})`,
        },
      ]);
    }
    await this.limits.set({ subject, callsPerHour: body.providerCallsPerHour, note: body.note, setBy: user.id }, (previous) =>
      auditEventOf(
        user,
        'customer_limit.set',
        { type: 'customer', id: subject },
        { note: body.note, details: { providerCallsPerHour: body.providerCallsPerHour, previousOverride: previous } },
      ),
    );
    return this.get(subject);
  }

  async clear(user: AuthUser, subject: string): Promise<CustomerLimitDto> {
    checkSubject(subject);
    await this.limits.clear(subject, (previous) =>
      auditEventOf(user, 'customer_limit.cleared', { type: 'customer', id: subject }, { details: { previousOverride: previous } }),
    );
    return this.get(subject);
  }
}

/** The path's subject: 1 to SUBJECT_MAX_LENGTH characters of safe text (no NUL, no lone surrogate). */
function checkSubject(subject: string): void {
  const reason =
    subject.length === 0 || subject.length > SUBJECT_MAX_LENGTH
      ? `must be 1 to ${SUBJECT_MAX_LENGTH} characters`
      : unsafeTextReason(subject);
  if (reason) throw new ValidationFailedError([{ field: 'subject', message: `subject ${reason}` }]);
}
