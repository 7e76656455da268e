import { Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { AgentBudgetRepository } from './agent-budget.repository';
import { AgentBudgetExhaustedError } from './provider.errors';

/**
 * The provider allows 600 requests per hour per IP on /api/agent/*, and every instance of this
 * service leaves through the same IP: the budget is counted in the database, for all of them.
 */
@Injectable()
export class AgentBudgetService {
  constructor(
    private readonly repository: AgentBudgetRepository,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  /** Takes a slot or throws AgentBudgetExhaustedError: the call must then not be sent. */
  async take(endpoint: string): Promise<void> {
    const decision = await this.repository.take(endpoint, this.config.provider.agentHourlyLimit);
    if (!decision.granted) throw new AgentBudgetExhaustedError(decision.retryAfterSeconds);
  }

  usedInLastHour(): Promise<number> {
    return this.repository.usedInLastHour();
  }
}
