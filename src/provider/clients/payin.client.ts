import { Injectable } from '@nestjs/common';
import { ProviderHttpClient } from '../provider-http.client';
import type { PayinEnvelope, PayinHeaders, PayinRequestBody } from '../provider.types';

/** Endpoint 1: `POST {base_url}/api/agent/bills/v3` with `operation: 2`, `service` and optional `otp` headers. */
@Injectable()
export class PayinClient {
  static readonly OPERATION_COLLECT = 2;

  constructor(private readonly http: ProviderHttpClient) {}

  async collect(body: PayinRequestBody, headers: PayinHeaders): Promise<PayinEnvelope> {
    const { data } = await this.http.send<PayinEnvelope>({
      area: 'payin',
      endpoint: 'payin.collect',
      host: 'base',
      method: 'POST',
      path: '/api/agent/bills/v3',
      headers: {
        operation: String(PayinClient.OPERATION_COLLECT),
        service: String(headers.service),
        ...(headers.otp !== undefined ? { otp: headers.otp } : {}),
      },
      body,
    });
    return data;
  }
}
