import { Injectable } from '@nestjs/common';
import { ProviderHttpClient } from '../provider-http.client';
import type { WalletLinkQuery, WalletLinkResponse } from '../provider.types';

/** Endpoint 10: `GET {link_base_url}/api/agent/link/new` (query email, phone, phoneCountry; JSON content type is sent too). */
@Injectable()
export class WalletLinkClient {
  constructor(private readonly http: ProviderHttpClient) {}

  async linkUser(query: WalletLinkQuery): Promise<WalletLinkResponse['data']> {
    const { data } = await this.http.send<WalletLinkResponse>({
      area: 'wallet-links',
      endpoint: 'link.new',
      host: 'link',
      method: 'GET',
      path: '/api/agent/link/new',
      query: { email: query.email, phone: query.phone, phoneCountry: query.phoneCountry },
      headers: { 'content-type': 'application/json' },
    });
    return data.data;
  }
}
