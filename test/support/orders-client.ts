import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { CallbackUrlsService } from '../../src/orders/callback-urls.service';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import type { TestService } from './test-service';
import { orderRequest } from './provider-factories';

/** A customer of the service, speaking HTTP to it with its own bearer token. */
export async function customer(
  service: TestService,
  sub = `cust_${randomUUID().slice(0, 8)}`,
  ...roles: ('customer' | 'finance' | 'admin')[]
) {
  const token = await service.bearer(sub, ...roles);
  const http = () => request(service.server);
  return {
    sub,
    token,
    createOrder: (overrides: Record<string, unknown> = {}, key: string = randomUUID()) =>
      http().post('/v1/orders').auth(token, { type: 'bearer' }).set('Idempotency-Key', key).send(orderRequest(overrides)),
    getOrder: (id: string) => http().get(`/v1/orders/${id}`).auth(token, { type: 'bearer' }),
    listOrders: (query: Record<string, string> = {}) => http().get('/v1/orders').query(query).auth(token, { type: 'bearer' }),
    events: (id: string) => http().get(`/v1/orders/${id}/events`).auth(token, { type: 'bearer' }).buffer(true),
  };
}

/** Polls GET /v1/orders/{id} until `predicate` holds (callbacks arrive asynchronously). */
export async function waitForOrder(
  service: TestService,
  token: string,
  id: string,
  predicate: (order: Record<string, unknown>) => boolean,
  timeoutMs = 10_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await request(service.server).get(`/v1/orders/${id}`).auth(token, { type: 'bearer' });
    if (res.status === 200 && predicate(res.body)) return res.body as Record<string, any>;
    if (Date.now() > deadline) throw new Error(`order ${id} never matched; last: ${JSON.stringify(res.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Parses a text/event-stream body into its events (comment lines, such as keep-alives, are not events). */
export function parseSse(text: string): { event?: string; id?: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((block) => block.split('\n').some((line) => line.trim() && !line.startsWith(':')))
    .map((block) => {
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        const i = line.indexOf(':');
        if (i > 0) fields[line.slice(0, i)] = line.slice(i + 1).trim();
      }
      return { event: fields.event, id: fields.id, data: fields.data ? JSON.parse(fields.data) : undefined };
    });
}

/** A PROCESSING order the sandbox never calls back, its customer, and its two signed callback paths (path and query). */
export async function quietOrder(service: TestService) {
  const alice = await customer(service);
  const res = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK });
  expect(res.status).toBe(201);
  expect(res.body.status).toBe('PROCESSING');
  const urls = service.get(CallbackUrlsService).urlsFor(res.body.id);
  const pathOf = (url: string) => {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  };
  return { alice, order: res.body as { id: string }, success: pathOf(urls.successUrl), failure: pathOf(urls.failureUrl) };
}

type Buyer = Awaited<ReturnType<typeof customer>>;

/**
 * Orders for a person to find in the Swagger UI: each of `processing` accepted by the provider and
 * never called back (PROCESSING), then `lost`, whose answer the provider lost (UNKNOWN, in the
 * attention queue until a person decides). Throws when either does not come out so.
 */
export async function seedOrdersToFind(
  buyer: Buyer,
  processing: { amount: string; description: string }[],
  lost: { amount: string; description: string },
): Promise<{ processingIds: string[]; unknownId: string }> {
  const processingIds: string[] = [];
  for (const order of processing) {
    const res = await buyer.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK, ...order });
    if (res.status !== 201) throw new Error(`seeding an order answered ${res.status}: ${JSON.stringify(res.body)}`);
    processingIds.push(res.body.id);
  }
  const unknown = await buyer.createOrder({ wallet: TEST_WALLETS.LOST_ANSWER, ...lost });
  if (unknown.body.status !== 'UNKNOWN')
    throw new Error(`seeding an UNKNOWN order answered ${unknown.status}: ${JSON.stringify(unknown.body)}`);
  return { processingIds, unknownId: unknown.body.id };
}
