import { Injectable, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { MetricsService } from '../metrics/metrics.service';
import { ScopedValue } from '../common/async-scope';
import type { AppConfig } from '../config/app-config';
import { AgentBudgetRepository } from './agent-budget.repository';
import { AgentBudgetExhaustedError } from './provider.errors';

/**
 * The provider allows 600 requests per hour per IP on /api/agent/*, and every instance of this
 * service leaves through the same IP: the budget is counted in the database, for all of them.
 */
@Injectable()
export class AgentBudgetService implements OnModuleInit {
  readonly hourlyLimit: number;
  /** A slot the caller took in its own statement (agentBudgetTakeCte), for the next call made within `work`. */
  private readonly slotTaken = new ScopedValue<{ available: boolean }>('agentBudgetSlotTaken');

  constructor(
    private readonly repository: AgentBudgetRepository,
    config: ConfigService<AppConfig, true>,
    private readonly metrics: MetricsService,
  ) {
    this.hourlyLimit = config.get('provider', { infer: true }).agentHourlyLimit;
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

  /** Takes a slot or throws AgentBudgetExhaustedError: the call must then not be sent. */
  async take(): Promise<void> {
    const taken = this.slotTaken.get();
    if (taken?.available) {
      taken.available = false;
      return;
    }
    const decision = await this.repository.take(this.hourlyLimit);
    if (!decision.granted) throw new AgentBudgetExhaustedError(decision.retryAfterSeconds);
  }
}
