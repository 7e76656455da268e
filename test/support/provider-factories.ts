import { randomUUID } from 'node:crypto';
import type { CardUserBody, PayinRequestBody } from '../../src/provider/provider.types';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';

/** Valid provider request bodies, with any field overridden. */
export function payinBody(overrides: Partial<PayinRequestBody> = {}): PayinRequestBody {
  const orderId = `ord_${randomUUID()}`;
  return {
    wallet: TEST_WALLETS.NO_CALLBACK,
    amount: 1500,
    currency: 'XAF',
    order_id: orderId,
    description: 'Order 42',
    payer: 'Awa Ndiaye',
    payerEmail: 'awa@example.com',
    successUrl: `http://127.0.0.1:9/v1/callbacks/payin/${orderId}/success?token=t`,
    failureUrl: `http://127.0.0.1:9/v1/callbacks/payin/${orderId}/failure?token=t`,
    ...overrides,
  };
}

export function cardUserBody(overrides: Partial<CardUserBody> = {}): CardUserBody {
  return {
    first_name: 'Awa',
    last_name: 'Ndiaye',
    email: `awa.${randomUUID().slice(0, 8)}@example.com`,
    country_code: 'CM',
    contact: '237650000000',
    dob: '1990-04-12',
    is_business: false,
    billing_adress: '12 rue de la Joie',
    billing_city: 'Douala',
    billing_country: 'CM',
    id_number: 'ID123456',
    business_name: '',
    billing_state: 'Littoral',
    billing_postal_code: '00237',
    ...overrides,
  };
}

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}.${randomUUID().slice(0, 8)}@example.com`;
}

/** A valid POST /v1/orders body (camelCase, our API), with any field overridden. */
export function orderRequest(overrides: Record<string, unknown> = {}) {
  return {
    amount: '1500',
    currency: 'XAF',
    wallet: TEST_WALLETS.SUCCESS,
    service: 1,
    description: 'Order #1042',
    payer: 'Awa Ndiaye',
    payerEmail: 'awa@example.com',
    ...overrides,
  };
}
