import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { quietOrder } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * The edges of the callback URLs: a path no order can have (a NUL) is stored as REJECTED and
 * answered 404; only GET and POST decide (a HEAD changes nothing); credential-like headers are
 * never stored nor shown in clear.
 */
describe('callback URL edges', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let finance: string;
  const storedWhere = (where: { pathOrderId?: string; orderId?: string }) =>
    service.prisma.providerCallback.findMany({ where, orderBy: { receivedAt: 'asc' } });

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    finance = await service.bearer('fin-edges', 'finance');
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  describe('a NUL in the path', () => {
    it('POST /v1/callbacks/payin/%00/success: stored as REJECTED (NUL shown as U+FFFD), answered 404 problem+json', async () => {
      const before = (await storedWhere({ pathOrderId: '\uFFFD' })).length;
      const res = await request(service.server).post('/v1/callbacks/payin/%00/success').set('content-type', 'text/plain').send('x\u0000y');
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      const stored = await storedWhere({ pathOrderId: '\uFFFD' });
      expect(stored).toHaveLength(before + 1);
      expect(stored.at(-1)).toMatchObject({ result: 'REJECTED', orderId: null, outcome: 'success', rawBody: 'x\uFFFDy' });
    });

    it('in the order id or the outcome of a signed URL: REJECTED, 404, the order unchanged', async () => {
      const quiet = await quietOrder(service);
      const [path, query] = quiet.success.split('?');
      const variants = [
        `${path.replace(quiet.order.id, `${quiet.order.id}%00`)}?${query}`,
        `${path}%00?${query}`,
        `${path.replace('/payin/', '/payin/%00')}?${query}`,
      ];
      for (const url of variants) {
        const res = await request(service.server).get(url);
        expect([url, res.status]).toEqual([url, 404]);
        expect(res.headers['content-type']).toMatch(/problem\+json/);
      }
      const stored = [
        ...(await storedWhere({ pathOrderId: `${quiet.order.id}\uFFFD` })),
        ...(await storedWhere({ pathOrderId: quiet.order.id })),
        ...(await storedWhere({ pathOrderId: `\uFFFD${quiet.order.id}` })),
      ];
      expect(stored.map((c) => [c.result, c.orderId])).toEqual([
        ['REJECTED', null],
        ['REJECTED', null],
        ['REJECTED', null],
      ]);
      expect(stored.map((c) => c.outcome).sort()).toEqual(['success', 'success', 'success\uFFFD']);
      expect((await quiet.alice.getOrder(quiet.order.id)).body.status).toBe('PROCESSING');
    });

    it('a NUL in the query of an unsigned call: REJECTED, 404', async () => {
      const orderId = randomUUID();
      const res = await request(service.server).post(`/v1/callbacks/payin/${orderId}/failure?token=wrong%00&n%00=v%00`);
      expect(res.status).toBe(404);
      const [stored] = await storedWhere({ pathOrderId: orderId });
      expect(stored).toMatchObject({ result: 'REJECTED', query: { token: '[REDACTED]', 'n\uFFFD': 'v\uFFFD' } });
    });
  });

  describe('only GET and POST decide', () => {
    it('a HEAD on a signed URL answers 404, stores nothing and leaves the order as it was; a GET then decides it', async () => {
      const quiet = await quietOrder(service);
      const head = await request(service.server).head(quiet.success);
      expect(head.status).toBe(404);
      expect(head.headers['content-type']).toMatch(/problem\+json/);
      expect(await storedWhere({ orderId: quiet.order.id })).toHaveLength(0);
      expect((await quiet.alice.getOrder(quiet.order.id)).body.status).toBe('PROCESSING');

      expect((await request(service.server).get(quiet.success)).status).toBe(200);
      expect((await quiet.alice.getOrder(quiet.order.id)).body.status).toBe('SUCCEEDED');
    });

    it('answers HEAD like another method the route does not have', async () => {
      const quiet = await quietOrder(service);
      const put = await request(service.server).put(quiet.failure);
      const head = await request(service.server).head(quiet.failure);
      expect(head.status).toBe(put.status);
      expect((await quiet.alice.getOrder(quiet.order.id)).body.status).toBe('PROCESSING');
    });
  });

  describe('credential-like headers', () => {
    const credentials = {
      'proxy-authorization': 'Basic cHJveHk6c2VjcmV0LTE=',
      'x-auth-token': 'auth-token-2',
      'x-signature': 'sha256=signature-3',
      'x-api-key': 'api-key-4',
      'x-client-secret': 'client-secret-5',
      'x-session-id': 'session-6',
      'x-password': 'password-7',
      'x-provider-key': 'provider-key-8',
      cookie: 'sid=cookie-9',
    };
    const clear = /cHJveHk6c2VjcmV0LTE=|auth-token-2|signature-3|api-key-4|client-secret-5|session-6|password-7|provider-key-8|cookie-9/;

    it('are redacted before storage, on a signed and on an unsigned call, and never shown in clear', async () => {
      const quiet = await quietOrder(service);
      const signed = await request(service.server).post(quiet.success).set(credentials).set('x-ordinary', 'kept');
      expect(signed.status).toBe(200);
      const unsignedId = randomUUID();
      expect((await request(service.server).post(`/v1/callbacks/payin/${unsignedId}/success?token=x`).set(credentials)).status).toBe(404);

      const stored = [...(await storedWhere({ orderId: quiet.order.id })), ...(await storedWhere({ pathOrderId: unsignedId }))];
      expect(stored).toHaveLength(2);
      for (const callback of stored) {
        const headers = callback.headers as Record<string, string>;
        for (const name of Object.keys(credentials)) expect([name, headers[name]]).toEqual([name, '[REDACTED]']);
        expect(JSON.stringify(callback)).not.toMatch(clear);
      }
      expect((stored[0].headers as Record<string, string>)['x-ordinary']).toBe('kept');

      const listed = await request(service.server)
        .get('/v1/callbacks')
        .query({ orderId: quiet.order.id })
        .auth(finance, { type: 'bearer' });
      expect(listed.status).toBe(200);
      expect(listed.body.items).toHaveLength(1);
      expect(listed.body.items[0].headers['x-auth-token']).toBe('[REDACTED]');
      expect(listed.text).not.toMatch(clear);
      const history = await quiet.alice.getOrder(quiet.order.id);
      expect(JSON.stringify(history.body)).not.toMatch(clear);
    });

    it('stored in clear before this rule existed, are still not shown', async () => {
      const quiet = await quietOrder(service);
      await service.prisma.providerCallback.create({
        data: {
          orderId: quiet.order.id,
          pathOrderId: quiet.order.id,
          outcome: 'success',
          result: 'DUPLICATE',
          method: 'POST',
          query: { token: '[REDACTED]', 'x-signature': 'signature-3' },
          headers: { 'x-auth-token': 'auth-token-2', 'proxy-authorization': 'Basic cHJveHk6c2VjcmV0LTE=', 'x-ordinary': 'kept' },
        },
      });
      const listed = await request(service.server)
        .get('/v1/callbacks')
        .query({ orderId: quiet.order.id })
        .auth(finance, { type: 'bearer' });
      expect(listed.status).toBe(200);
      expect(listed.body.items[0].headers).toEqual({
        'x-auth-token': '[REDACTED]',
        'proxy-authorization': '[REDACTED]',
        'x-ordinary': 'kept',
      });
      expect(listed.text).not.toMatch(clear);
    });
  });
});
