import { Module } from '@nestjs/common';
import { DatabaseModule } from '../database/database.module';
import { MetricsModule } from '../metrics/metrics.module';
import { AgentBudgetRepository } from './agent-budget.repository';
import { AgentBudgetService } from './agent-budget.service';
import { AgentBudgetSweepJob } from './agent-budget-sweep.job';
import { CardsClient } from './clients/cards.client';
import { DistributionClient } from './clients/distribution.client';
import { PayinClient } from './clients/payin.client';
import { ProviderAuthClient } from './clients/provider-auth.client';
import { WalletLinkClient } from './clients/wallet-link.client';
import { ProviderCallLog } from './provider-call-log';
import { ProviderCallRepository } from './provider-call.repository';
import { ProviderHttpClient } from './provider-http.client';
import { ProviderTokenRepository } from './provider-token.repository';
import { ProviderTokenService } from './provider-token.service';
import { ProviderTransport } from './provider-transport';

const areaClients = [PayinClient, CardsClient, WalletLinkClient, DistributionClient, ProviderAuthClient];

@Module({
  imports: [DatabaseModule, MetricsModule],
  providers: [
    ProviderTransport,
    ProviderCallRepository,
    ProviderCallLog,
    ProviderTokenRepository,
    ProviderTokenService,
    AgentBudgetRepository,
    AgentBudgetService,
    AgentBudgetSweepJob,
    ProviderHttpClient,
    ...areaClients,
  ],
  exports: [...areaClients, ProviderTokenService, AgentBudgetService],
})
export class ProviderModule {}
