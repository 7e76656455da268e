import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { Role } from '../../src/auth/auth.types';
import type { TestService } from './test-service';

/** A valid POST /v1/card-users body (camelCase, our API), with any field overridden (undefined removes it). */
export function cardUserRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    firstName: 'Awa',
    lastName: 'Ndiaye',
    email: `awa.${randomUUID().slice(0, 8)}@example.com`,
    countryCode: 'CM',
    contact: '237650000000',
    dob: '1990-04-12',
    isBusiness: false,
    billingAddress: '12 rue de la Joie',
    billingCity: 'Douala',
    billingCountry: 'CM',
    billingState: 'Littoral',
    billingPostalCode: '00237',
    idNumber: `ID${randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`,
    ...overrides,
  };
  for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
  return body;
}

/** A user of the service speaking HTTP to the card routes with its own bearer token. */
export async function cardsClient(service: TestService, sub = `cust_${randomUUID().slice(0, 8)}`, ...roles: Role[]) {
  const token = await service.bearer(sub, ...roles);
  const http = () => request(service.server);
  const auth = { type: 'bearer' as const };
  return {
    sub,
    token,
    createCardUser: (overrides: Record<string, unknown> = {}, key: string = randomUUID()) =>
      http().post('/v1/card-users').auth(token, auth).set('Idempotency-Key', key).send(cardUserRequest(overrides)),
    getCardUser: (id: string) => http().get(`/v1/card-users/${id}`).auth(token, auth),
    listCardUsers: (query: Record<string, string> = {}) => http().get('/v1/card-users').query(query).auth(token, auth),
    cardUserOperations: (id: string, query: Record<string, string> = {}) =>
      http().get(`/v1/card-users/${id}/operations`).query(query).auth(token, auth),
    createCard: (cardUserId: string, body: Record<string, unknown> = { balance: '5000', currency: 'XAF' }, key: string = randomUUID()) =>
      http().post(`/v1/card-users/${cardUserId}/cards`).auth(token, auth).set('Idempotency-Key', key).send(body),
    getCard: (id: string) => http().get(`/v1/cards/${id}`).auth(token, auth),
    listCards: (query: Record<string, string> = {}) => http().get('/v1/cards').query(query).auth(token, auth),
    topUp: (id: string, amount: unknown, key: string = randomUUID()) =>
      http().post(`/v1/cards/${id}/topup`).auth(token, auth).set('Idempotency-Key', key).send({ amount }),
    withdraw: (id: string, amount: unknown, key: string = randomUUID()) =>
      http().post(`/v1/cards/${id}/withdraw`).auth(token, auth).set('Idempotency-Key', key).send({ amount }),
    freeze: (id: string) => http().post(`/v1/cards/${id}/freeze`).auth(token, auth),
    unfreeze: (id: string) => http().post(`/v1/cards/${id}/unfreeze`).auth(token, auth),
    terminate: (id: string) => http().post(`/v1/cards/${id}/terminate`).auth(token, auth),
    transactions: (id: string, query: Record<string, string> = {}) =>
      http().get(`/v1/cards/${id}/transactions`).query(query).auth(token, auth),
    cardOperations: (id: string, query: Record<string, string> = {}) =>
      http().get(`/v1/cards/${id}/operations`).query(query).auth(token, auth),
    operation: (id: string) => http().get(`/v1/card-operations/${id}`).auth(token, auth),
  };
}

export type CardsClientOf = Awaited<ReturnType<typeof cardsClient>>;

/** A card user and one card of it, created through the API; the card answer holds the number and CVV. */
export async function userWithCard(client: CardsClientOf, card: Record<string, unknown> = { balance: '5000', currency: 'XAF' }) {
  const user = await client.createCardUser();
  if (user.status !== 201) throw new Error(`card user creation failed: ${user.status} ${JSON.stringify(user.body)}`);
  const created = await client.createCard(user.body.id, card);
  if (created.status !== 201) throw new Error(`card creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  return { cardUser: user.body as Record<string, any>, card: created.body as Record<string, any> };
}
