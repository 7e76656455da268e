import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../config/app-config';
import { ProviderTransport } from '../provider-transport';
import { ProviderAuthenticationError, ProviderError, ProviderUnreachableError } from '../provider.errors';
import type { TokenResponse } from '../provider.types';

export interface IssuedToken {
  token: string;
  expiresAt: Date;
}

/**
 * Endpoint 2: `POST {base_url}/api/action/auth`. Sent without a bearer (there is none yet). Every
 * failure is a ProviderAuthenticationError: generic to clients, detailed (scrubbed) in the log.
 */
@Injectable()
export class ProviderAuthClient {
  private readonly providerConfig: AppConfig['provider'];

  constructor(
    private readonly transport: ProviderTransport,
    config: ConfigService<AppConfig, true>,
  ) {
    this.providerConfig = config.get('provider', { infer: true });
  }

  async issueToken(): Promise<IssuedToken> {
    const request = {
      area: 'auth' as const,
      endpoint: 'auth.token',
      host: 'base' as const,
      method: 'POST' as const,
      path: '/api/action/auth',
      body: { public_apikey: this.providerConfig.apiKey, private_secretkey: this.providerConfig.secretKey },
    };
    let data: TokenResponse;
    let status: number;
    try {
      const answer = await this.transport.exchange(request, {});
      status = answer.status;
      data = this.transport.interpret<TokenResponse>(request, answer).data;
    } catch (error) {
      // Whatever the token endpoint answered, the client whose request needed a token sees one
      // generic problem saying nothing was sent; the provider's (scrubbed) words stay on the error
      // for the log. An unreachable provider already says just that.
      if (!(error instanceof ProviderError) || error instanceof ProviderUnreachableError) throw error;
      throw new ProviderAuthenticationError({ providerStatus: error.providerStatus, providerMessage: error.providerMessage, cause: error });
    }
    const expiresAt = new Date(data?.data?.expireAt);
    if (typeof data?.token !== 'string' || data.token === '' || Number.isNaN(expiresAt.getTime())) {
      throw new ProviderAuthenticationError({ providerStatus: status, providerMessage: 'answer without a usable token or expiry' });
    }
    return { token: data.token, expiresAt };
  }
}
