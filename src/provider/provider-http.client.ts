import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/app-config';
import { registerSecretValue } from '../logging/redaction';
import { AgentBudgetService } from './agent-budget.service';
import { ProviderTokenService, type ProviderBearer } from './provider-token.service';
import type { ProviderRequest, ProviderResponse } from './provider-request';
import { ProviderTransport } from './provider-transport';

const AGENT_PREFIX = '/api/agent/';
const CARD_PREFIX = '/api/action/card';

/**
 * The one HTTP core every area client goes through. On top of the transport it adds what the
 * provider requires of every authenticated call: the shared /api/agent budget, the bearer token,
 * `x-api-key` on /api/agent/*, `x-sp-auth-token` on card routes, and one token renewal (a token
 * newer than the refused one, asked for since the request began) and one retry after a 401.
 */
@Injectable()
export class ProviderHttpClient {
  private readonly providerConfig: AppConfig['provider'];

  constructor(
    private readonly transport: ProviderTransport,
    private readonly tokens: ProviderTokenService,
    private readonly budget: AgentBudgetService,
    config: ConfigService<AppConfig, true>,
  ) {
    this.providerConfig = config.get('provider', { infer: true });
  }

  async send<T>(request: ProviderRequest): Promise<ProviderResponse<T>> {
    const startedAt = Date.now();
    const bearer = await this.tokens.getBearer();
    let answer = await this.attempt(request, bearer);
    if (answer.status === 401) {
      // A revocation may have killed every token obtained so far: retry with one asked for since this request began.
      answer = await this.attempt(request, await this.tokens.renewAfterRejection(bearer, startedAt));
    }
    return this.transport.interpret<T>(request, answer);
  }

  private async attempt(request: ProviderRequest, bearer: ProviderBearer) {
    const isAgent = request.path.startsWith(AGENT_PREFIX);
    if (isAgent) await this.budget.take();
    // The token in use stays among the newest values the scrubber knows (card numbers and apikeys come in between).
    registerSecretValue(bearer.token);
    const headers: Record<string, string> = { ...request.headers, authorization: `Bearer ${bearer.token}` };
    if (isAgent) headers['x-api-key'] = this.providerConfig.apiKey;
    if (request.path.startsWith(CARD_PREFIX)) headers['x-sp-auth-token'] = this.providerConfig.spAuthToken;
    return this.transport.exchange(request, headers);
  }
}
