import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { CallbackUrlsService } from '../../src/orders/callback-urls.service';
import { OrderExpiryJob } from '../../src/orders/order-expiry.job';
import { OrdersRepository } from '../../src/orders/orders.repository';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { customer } from '../support/orders-client';
import type { TestService } from '../support/test-service';

export type Buyer = Awaited<ReturnType<typeof customer>>;

/** Orders in each state a person may (or may not) have to decide, made the way production makes them. */
export function orderMaker(service: TestService, buyer: Buyer) {
  const create = async (wallet: string, expected: string) => {
    const res = await buyer.createOrder({ wallet });
    if (res.status !== 201 || res.body.status !== expected)
      throw new Error(`expected a ${expected} order, got ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Record<string, any>;
  };
  return {
    /** The sandbox processes it but answers 502 and never calls back. */
    unknown: () => create(TEST_WALLETS.LOST_ANSWER, 'UNKNOWN'),
    processing: () => create(TEST_WALLETS.NO_CALLBACK, 'PROCESSING'),
    failed: () => create(TEST_WALLETS.INSUFFICIENT_FUNDS, 'FAILED'),
    /** PROCESSING past the expiry deadline, then swept, as the scheduler does. */
    expired: async () => {
      const order = await create(TEST_WALLETS.NO_CALLBACK, 'PROCESSING');
      await service.prisma.$executeRaw`UPDATE orders SET processing_since = now() - interval '30 days' WHERE id = ${order.id}::uuid`;
      await service.get(OrderExpiryJob).sweepNow();
      return { ...order, status: 'EXPIRED' } as Record<string, any>;
    },
    /** Stored, never handed to the provider (a crash before the call), `ageSeconds` old. */
    pending: async (ageSeconds: number) => {
      const { order } = await service.get(OrdersRepository).create(
        {
          reference: `ord_${randomUUID().replace(/-/g, '')}`,
          customerId: buyer.sub,
          amount: '1500',
          currency: 'XAF',
          service: 1,
          wallet: TEST_WALLETS.SUCCESS,
          description: 'interrupted before the provider call',
          payer: 'Awa Ndiaye',
          payerEmail: 'awa@example.com',
        },
        undefined,
        null,
      );
      await service.prisma
        .$executeRaw`UPDATE orders SET created_at = now() - make_interval(secs => ${ageSeconds}) WHERE id = ${order.id}::uuid`;
      return { id: order.id, status: 'PENDING' } as Record<string, any>;
    },
  };
}

/** The provider calling one of the order's signed callback URLs. */
export function providerCallback(service: TestService, orderId: string, outcome: 'success' | 'failure') {
  const urls = service.get(CallbackUrlsService).urlsFor(orderId);
  const url = new URL(outcome === 'success' ? urls.successUrl : urls.failureUrl);
  return request(service.server)
    .post(url.pathname + url.search)
    .send({ status: outcome === 'success' ? 'SUCCESS' : 'FAILED' });
}

export function adminCalls(service: TestService, token: string) {
  const auth = { type: 'bearer' as const };
  return {
    resolveOrder: (id: string, body: Record<string, unknown>, key: string | null = randomUUID()) => {
      const req = request(service.server).post(`/v1/orders/${id}/resolution`).auth(token, auth);
      return (key === null ? req : req.set('Idempotency-Key', key)).send(body);
    },
    clearReview: (id: string, body: Record<string, unknown>) =>
      request(service.server).post(`/v1/orders/${id}/review`).auth(token, auth).send(body),
    resolveCardOperation: (id: string, body: Record<string, unknown>, key: string = randomUUID()) =>
      request(service.server).post(`/v1/card-operations/${id}/resolution`).auth(token, auth).set('Idempotency-Key', key).send(body),
    resolveDistribution: (id: string, body: Record<string, unknown>, key: string = randomUUID()) =>
      request(service.server).post(`/v1/distributions/${id}/resolution`).auth(token, auth).set('Idempotency-Key', key).send(body),
    auditEvents: (query: Record<string, string> = {}) => request(service.server).get('/v1/audit-events').query(query).auth(token, auth),
    attention: () => request(service.server).get('/v1/reports/attention').auth(token, auth),
  };
}

/** The audit events of one resource, straight from the table. */
export function auditRowsOf(service: TestService, resourceId: string) {
  return service.prisma.auditEvent.findMany({ where: { resourceId }, orderBy: { at: 'asc' } });
}
