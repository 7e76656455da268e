import { Injectable, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { MetricsService } from '../metrics/metrics.service';
import { ScopedValue } from '../common/async-scope';
import type { AppConfig } from '../config/app-config';
import type { BudgetShareRow, BudgetSlotRequest } from './agent-budget-take';
import { AgentBudgetRepository } from './agent-budget.repository';
import { customerLimitReached, customerShareOf, customerShareScope, rateLimitHeaders } from './customer-share';
import { AgentBudgetExhaustedError } from './provider.errors';

/**
 * The provider allows 600 requests per hour per IP on /api/agent/*, and every instance of this
 * service leaves through the same IP: the budget is counted in the database, for all of them. A
 * customer's requests (the routes marked @SpendsProviderBudget, with a customer's token) may cause
 * at most its share of it, counted in the same statement; staff requests and background jobs
 * (recovery, sweeps) count against the merchant-wide budget only.
 */
@Injectable()
export class AgentBudgetService implements OnModuleInit {
  readonly hourlyLimit: number;
  /** PROVIDER_CUSTOMER_HOURLY_LIMIT: a customer's share without an override. */
  readonly customerHourlyLimit: number;
  /** A slot the caller took in its own statement (agentBudgetTakeCte), for the next call made within `work`. */
  private readonly slotTaken = new ScopedValue<{ available: boolean }>('agentBudgetSlotTaken');

  constructor(
    private readonly repository: AgentBudgetRepository,
    config: ConfigService<AppConfig, true>,
    private readonly metrics: MetricsService,
  ) {
    ({ agentHourlyLimit: this.hourlyLimit, customerHourlyLimit: this.customerHourlyLimit } = config.get('provider', { infer: true }));
  }

  onModuleInit() {
    this.metrics.gaugeCollectedOnScrape(
      'provider_agent_budget_remaining',
      'Calls to /api/agent/* left in the rolling hour, for all instances together',
      [],
      async () => [{ labels: {}, value: Math.max(0, this.hourlyLimit - (await this.repository.usedInLastHour())) }],
    );
  }

  /**
   * Runs `work`, whose first call to /api/agent/* uses the slot the caller already took in the
   * statement that stored its operation (one round trip fewer per pay-in); later calls take their own.
   */
  withSlotTaken<T>(work: () => Promise<T>): Promise<T> {
    return this.slotTaken.run({ available: true }, work);
  }

  /** What a take made now asks: the merchant-wide limit and the customer of the request in progress, if any. */
  slotRequest(): BudgetSlotRequest {
    return {
      hourlyLimit: this.hourlyLimit,
      customer: customerShareScope.get()?.customer ?? null,
      customerHourlyLimit: this.customerHourlyLimit,
    };
  }

  /** Writes the customer's share a take answered on the request's reply (RateLimit-Policy and RateLimit). */
  showShare(row: BudgetShareRow): void {
    const share = customerShareOf(row);
    if (share) customerShareScope.get()?.write(rateLimitHeaders(share));
  }

  /**
   * Takes a slot or throws: CustomerLimitReachedError when the request's customer spent its share,
   * AgentBudgetExhaustedError when the merchant-wide budget is spent. The call must then not be sent.
   */
  async take(): Promise<void> {
    const taken = this.slotTaken.get();
    if (taken?.available) {
      taken.available = false;
      return;
    }
    const decision = await this.repository.take(this.slotRequest());
    this.showShare(decision.share);
    if (decision.granted) return;
    throw decision.refusedBy === 'customer'
      ? customerLimitReached(decision.share)
      : new AgentBudgetExhaustedError(decision.retryAfterSeconds);
  }
}
