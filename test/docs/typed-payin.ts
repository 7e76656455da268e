/**
 * What a frontend writes with a client generated from openapi.json: openapi-typescript's types
 * (the client's client/src/openapi/merchant-api.ts, written by `npm run docs:openapi`) and openapi-fetch.
 * Nothing here is typed by hand: request bodies, headers, query parameters and answers all come
 * from the document, named by its operationIds. test/docs/typed-client.e2e-spec.ts type-checks
 * this file with tsc and drives a pay-in with it.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { operations, paths } from '../../client/src/openapi/merchant-api';

export type MerchantClient = Client<paths>;
export type NewOrder = operations['createOrder']['requestBody']['content']['application/json'];
export type Order = operations['createOrder']['responses'][201]['content']['application/json'];
export type OrderDetail = operations['getOrder']['responses'][200]['content']['application/json'];
export type OrderPage = operations['listOrders']['responses'][200]['content']['application/json'];
export type OrderQuery = NonNullable<operations['listOrders']['parameters']['query']>;
type Problem = operations['createOrder']['responses'][400]['content']['application/problem+json'];

/** A client of the service at `baseUrl` that sends `token` as its bearer token on every request. */
export function merchantClient(baseUrl: string, token: string): MerchantClient {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } });
}

/** Fails with the problem's status and code, as a frontend would show them. */
function problemOf(operationId: keyof operations, response: Response, problem: Problem | undefined): Error {
  return new Error(`${operationId} answered ${response.status} ${problem?.code ?? '(no problem body)'}: ${problem?.detail ?? ''}`);
}

/** createOrder: POST /v1/orders with its Idempotency-Key (the type makes the header mandatory). */
export async function createOrder(client: MerchantClient, order: NewOrder, idempotencyKey: string): Promise<Order> {
  const { data, error, response } = await client.POST('/v1/orders', {
    params: { header: { 'Idempotency-Key': idempotencyKey } },
    body: order,
  });
  if (!data) throw problemOf('createOrder', response, error);
  return data;
}

/** getOrder: GET /v1/orders/{id}. */
export async function getOrder(client: MerchantClient, id: string): Promise<OrderDetail> {
  const { data, error, response } = await client.GET('/v1/orders/{id}', { params: { path: { id } } });
  if (!data) throw problemOf('getOrder', response, error);
  return data;
}

/** Polls getOrder until the order reaches `status` (a callback settles it asynchronously). */
export async function waitForOrderStatus(
  client: MerchantClient,
  id: string,
  status: Order['status'],
  timeoutMs = 15_000,
): Promise<OrderDetail> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const order = await getOrder(client, id);
    if (order.status === status) return order;
    if (Date.now() > deadline) throw new Error(`order ${id} is still ${order.status}, not ${status}, after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** listOrders: GET /v1/orders with typed filters. */
export async function listOrders(client: MerchantClient, query: OrderQuery = {}): Promise<OrderPage> {
  const { data, error, response } = await client.GET('/v1/orders', { params: { query } });
  if (!data) throw problemOf('listOrders', response, error);
  return data;
}
