import { Injectable } from '@nestjs/common';
import { ProviderHttpClient } from '../provider-http.client';
import type { FiatDistributionBody, InitDistributionBody, SuccessMessage } from '../provider.types';

/** Endpoints 8 and 9, on `{link_base_url}`: prepare a redistribution, redistribute a fiat payment. */
@Injectable()
export class DistributionClient {
  constructor(private readonly http: ProviderHttpClient) {}

  async initTransaction(body: InitDistributionBody): Promise<SuccessMessage> {
    const { data } = await this.http.send<SuccessMessage>({
      area: 'distributions',
      endpoint: 'link.init',
      host: 'link',
      method: 'POST',
      path: '/api/agent/link/init',
      body,
    });
    return data;
  }

  async distributeFiat(body: FiatDistributionBody): Promise<SuccessMessage> {
    const { data } = await this.http.send<SuccessMessage>({
      area: 'distributions',
      endpoint: 'link.fiat-distribution',
      host: 'link',
      method: 'POST',
      path: '/api/agent/link/fiat-distribution',
      body,
    });
    return data;
  }
}
