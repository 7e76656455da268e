import { Injectable } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { ProviderTransport } from '../provider-transport';
import { ProviderAuthenticationError, ProviderBadResponseError, ProviderRejectedError, ProviderUnauthorizedError } from '../provider.errors';
import type { TokenResponse } from '../provider.types';

export interface IssuedToken {
  token: string;
  expiresAt: Date;
}

/** Endpoint 2: `POST {base_url}/api/action/auth`. Sent without a bearer (there is none yet). */
@Injectable()
export class ProviderAuthClient {
  constructor(
    private readonly transport: ProviderTransport,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  async issueToken(): Promise<IssuedToken> {
    const request = {
      area: 'auth' as const,
      endpoint: 'auth.token',
      host: 'base' as const,
      method: 'POST' as const,
      path: '/api/action/auth',
      body: { public_apikey: this.config.provider.apiKey, private_secretkey: this.config.provider.secretKey },
    };
    const answer = await this.transport.exchange(request, {});
    let data: TokenResponse;
    try {
      data = this.transport.interpret<TokenResponse>(request, answer).data;
    } catch (error) {
      if (error instanceof ProviderRejectedError || error instanceof ProviderUnauthorizedError) {
        throw new ProviderAuthenticationError(
          `The payment provider refused the API key and secret${error.providerMessage ? `: ${error.providerMessage}` : ''}. Check PROVIDER_API_KEY and PROVIDER_SECRET_KEY.`,
          { providerStatus: error.providerStatus, providerMessage: error.providerMessage },
        );
      }
      throw error;
    }
    const expiresAt = new Date(data?.data?.expireAt);
    if (typeof data?.token !== 'string' || data.token === '' || Number.isNaN(expiresAt.getTime())) {
      throw new ProviderBadResponseError('The payment provider answered the token request without a usable token or expiry.', { providerStatus: answer.status });
    }
    return { token: data.token, expiresAt };
  }
}
