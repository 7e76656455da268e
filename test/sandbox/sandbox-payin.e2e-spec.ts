import type { AxiosInstance } from 'axios';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { API_KEY, CALLBACK_DELAY, RAW_JSON, sleep, http, tokenFor, payInBody, type CallbackReceiver, useSandbox } from './sandbox-harness';

describe('provider sandbox (HTTP)', () => {
  const context = useSandbox();
  const { extra, payInHeaders } = context;
  let sandbox: RunningSandbox;
  let api: AxiosInstance;
  let receiver: CallbackReceiver;
  beforeAll(() => ({ sandbox, api, receiver } = context));

  describe('pay-in', () => {
    it('validates the body with the full FAILURE envelope', async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ wallet: undefined }, /wallet/],
        [{ amount: '1500' }, /amount/],
        [{ amount: 0 }, /amount/],
        [{ currency: 'XA' }, /currency/],
        [{ payerEmail: 'not-an-email' }, /payerEmail/],
        [{ successUrl: '/relative' }, /successUrl/],
        [{ failureUrl: 'ftp://x.example/f' }, /failureUrl/],
        [{ order_id: undefined }, /order_id/],
      ];
      for (const [override, message] of cases) {
        const body = payInBody(receiver, override);
        const res = await api.post('/api/agent/bills/v3', body, { headers: payInHeaders() });
        expect(res.status).toBe(400);
        expect(res.data.message).toMatch(message);
        expect(res.data).toMatchObject({ success: false, code: 400, status: 'FAILURE' });
        expect(res.data.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
        expect(res.data.data).toMatchObject({
          operation: 'PURCHASE',
          transaction_reference: null,
          transaction_category: 'direct',
          transaction_channel: 'MSISDN',
        });
      }
      const malformed = await api.post('/api/agent/bills/v3', '{"wallet":', {
        ...RAW_JSON,
        headers: { ...payInHeaders(), 'content-type': 'application/json' },
      });
      expect(malformed.status).toBe(400);
      expect(malformed.data).toMatchObject({ success: false, code: 400, status: 'FAILURE', message: 'Malformed JSON body' });
    });

    it('accepts a payment, records the exact request, refuses a reused order_id and calls successUrl', async () => {
      const body = payInBody(receiver, { amount: 12.5, currency: 'EUR' });
      const res = await api.post('/api/agent/bills/v3', body, { headers: { ...payInHeaders(), otp: '1234' } });
      expect(res.status).toBe(200);
      expect(res.data).toEqual({
        success: true,
        code: 200,
        status: 'PROCESSING',
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
        data: {
          operation: 'PURCHASE',
          reference: expect.stringMatching(/^SP\d+$/),
          external_reference: body.order_id,
          transaction_reference: null,
          transaction_category: 'direct',
          transaction_channel: 'MSISDN',
          amount: '12.5',
          currency: 'EUR',
        },
        message: 'Transaction is processing',
      });
      const [recorded] = sandbox.state.requestsTo('/api/agent/bills/v3').filter((r) => (r.body as any)?.order_id === body.order_id);
      expect(recorded.body).toEqual(body);
      expect(recorded.headers).toMatchObject({ operation: '2', service: '20053', otp: '1234', 'x-api-key': API_KEY });
      const overHttp = await api.get('/__sandbox/requests', { params: { path: '/api/agent/bills/v3', method: 'post' } });
      expect(overHttp.data.some((r: any) => r.body?.order_id === body.order_id)).toBe(true);

      const dup = await api.post('/api/agent/bills/v3', body, { headers: payInHeaders() });
      expect(dup.status).toBe(400);
      expect(dup.data).toMatchObject({ success: false, status: 'FAILURE', message: 'Duplicate order_id' });

      const delivery = await sandbox.state.waitForCallback((d) => d.orderId === body.order_id && d.ok);
      expect(delivery.url).toBe(body.successUrl);
      const got = receiver.received.find((r) => r.body?.external_reference === body.order_id)!;
      expect(got.method).toBe('POST');
      expect(got.path).toBe(new URL(body.successUrl as string).pathname + '?token=abc');
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.body).toEqual({
        status: 'SUCCESS',
        reference: res.data.data.reference,
        external_reference: body.order_id,
        amount: '12.5',
        currency: 'EUR',
        transaction_reference: expect.stringMatching(/^TR\d+$/),
        message: 'Transaction successful',
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      });
    });

    async function payAndCollect(wallet: string, expectedCallbacks: number, waitMs = 0) {
      const body = payInBody(receiver, { wallet });
      const res = await api.post('/api/agent/bills/v3', body, { headers: payInHeaders() });
      const mine = () => receiver.received.filter((r) => r.body?.external_reference === body.order_id);
      const deadline = Date.now() + 3000;
      while (mine().length < expectedCallbacks && Date.now() < deadline) await sleep(10);
      if (waitMs) await sleep(waitMs);
      return { body, res, callbacks: mine() };
    }

    it('237600000002 is accepted then calls failureUrl', async () => {
      const { body, res, callbacks } = await payAndCollect(TEST_WALLETS.FAILURE, 1, 3 * CALLBACK_DELAY);
      expect(res.status).toBe(200);
      expect(res.data.status).toBe('PROCESSING');
      expect(callbacks).toHaveLength(1);
      expect(callbacks[0].path).toContain('/failure');
      expect(callbacks[0].body).toMatchObject({ status: 'FAILED', external_reference: body.order_id, message: 'Transaction failed' });
    });

    it('237600000003 is rejected with Insufficient funds and never calls back', async () => {
      const { body, res, callbacks } = await payAndCollect(TEST_WALLETS.INSUFFICIENT_FUNDS, 0, 3 * CALLBACK_DELAY);
      expect(res.status).toBe(400);
      expect(res.data).toMatchObject({
        success: false,
        code: 400,
        status: 'FAILURE',
        message: 'Insufficient funds',
        data: { external_reference: body.order_id, amount: '1500', currency: 'XAF', reference: expect.stringMatching(/^SP\d+$/) },
      });
      expect(callbacks).toHaveLength(0);
    });

    it('237600000005 answers 500 text/html and never calls back', async () => {
      const { res, callbacks } = await payAndCollect(TEST_WALLETS.SERVER_ERROR, 0, 3 * CALLBACK_DELAY);
      expect(res.status).toBe(500);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.data).toBe('<html>Internal Server Error</html>');
      expect(callbacks).toHaveLength(0);
    });

    it('237600000006 is accepted and never calls back', async () => {
      const { body, res, callbacks } = await payAndCollect(TEST_WALLETS.NO_CALLBACK, 0, 6 * CALLBACK_DELAY);
      expect(res.status).toBe(200);
      expect(callbacks).toHaveLength(0);
      expect(sandbox.state.payIns.get(body.order_id as string)?.status).toBe('PROCESSING');
    });

    it('237600000007 calls successUrl then failureUrl', async () => {
      const { callbacks } = await payAndCollect(TEST_WALLETS.CONFLICTING_CALLBACKS, 2, 3 * CALLBACK_DELAY);
      expect(callbacks.map((c) => c.body.status)).toEqual(['SUCCESS', 'FAILED']);
      expect(callbacks[0].path).toContain('/success');
      expect(callbacks[1].path).toContain('/failure');
      expect(callbacks[0].body.reference).toBe(callbacks[1].body.reference);
    });

    it('237600000008 calls successUrl twice with the same payload', async () => {
      const { callbacks } = await payAndCollect(TEST_WALLETS.DUPLICATE_CALLBACK, 2, 3 * CALLBACK_DELAY);
      expect(callbacks).toHaveLength(2);
      expect(callbacks[0].path).toContain('/success');
      expect(callbacks[1].body).toEqual(callbacks[0].body);
    });

    it('any other wallet succeeds', async () => {
      const { callbacks } = await payAndCollect('237699999999', 1);
      expect(callbacks).toHaveLength(1);
      expect(callbacks[0].body.status).toBe('SUCCESS');
    });

    it('237600000004 holds the request: the client times out, the payment is processed afterwards', async () => {
      const body = payInBody(receiver, { wallet: TEST_WALLETS.TIMEOUT });
      const started = Date.now();
      await expect(api.post('/api/agent/bills/v3', body, { headers: payInHeaders(), timeout: 150 })).rejects.toMatchObject({
        code: 'ECONNABORTED',
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      const delivery = await sandbox.state.waitForCallback((d) => d.orderId === body.order_id && d.ok, 3000);
      expect(delivery.outcome).toBe('SUCCESS');
      // The order_id is consumed even though the client never saw an answer.
      const dup = await api.post('/api/agent/bills/v3', body, { headers: payInHeaders() });
      expect(dup.data.message).toBe('Duplicate order_id');
    });

    it('237600000004 answers 504 text/html after hangMs when the client waits', async () => {
      const body = payInBody(receiver, { wallet: TEST_WALLETS.TIMEOUT });
      const started = Date.now();
      const res = await api.post('/api/agent/bills/v3', body, { headers: payInHeaders() });
      expect(Date.now() - started).toBeGreaterThanOrEqual(390);
      expect(res.status).toBe(504);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
    });

    it('close() releases a held request at once', async () => {
      const sb = await startSandbox({ port: 0, hangMs: 60_000 });
      const c = http(sb);
      const t = await tokenFor(c);
      const pending = c
        .post('/api/agent/bills/v3', payInBody(receiver, { wallet: TEST_WALLETS.TIMEOUT }), { headers: payInHeaders(t) })
        .then(
          () => 'answered',
          (err: { code?: string }) => err.code ?? 'error',
        );
      await sb.state.waitForRequest((r) => r.path === '/api/agent/bills/v3');
      await sleep(20);
      const started = Date.now();
      await sb.close();
      expect(Date.now() - started).toBeLessThan(1000);
      expect(await pending).not.toBe('answered');
    });

    it('retries a callback answered 500 with exponential backoff, recording each attempt', async () => {
      const body = payInBody(receiver);
      let seen = 0;
      receiver.statusFor = (entry) => (entry.body?.external_reference === body.order_id && seen++ < 2 ? 500 : 200);
      const res = await api.post('/api/agent/bills/v3', body, { headers: payInHeaders() });
      expect(res.status).toBe(200);
      const ok = await sandbox.state.waitForCallback((d) => d.orderId === body.order_id && d.ok, 3000);
      expect(ok.attempt).toBe(3);
      const attempts = sandbox.state.callbackDeliveries.filter((d) => d.orderId === body.order_id);
      expect(attempts.map((a) => [a.attempt, a.httpStatus, a.ok])).toEqual([
        [1, 500, false],
        [2, 500, false],
        [3, 200, true],
      ]);
      // Backoff: callbackDelayMs, then twice that.
      const gap1 = Date.parse(attempts[1].at) - Date.parse(attempts[0].at);
      const gap2 = Date.parse(attempts[2].at) - Date.parse(attempts[1].at);
      expect(gap1).toBeGreaterThanOrEqual(CALLBACK_DELAY - 5);
      expect(gap2).toBeGreaterThanOrEqual(2 * CALLBACK_DELAY - 5);
      const overHttp = await api.get('/__sandbox/callbacks');
      expect(overHttp.data.filter((d: any) => d.orderId === body.order_id)).toHaveLength(3);
    });

    it('gives up after 5 attempts, also on network errors', async () => {
      const sb = await extra({ callbackDelayMs: 5 });
      const c = http(sb);
      const t = await tokenFor(c);
      const body = payInBody(receiver, { successUrl: 'http://127.0.0.1:1/unreachable' });
      expect((await c.post('/api/agent/bills/v3', body, { headers: payInHeaders(t) })).status).toBe(200);
      await sb.state.waitForCallback((d) => d.attempt === 5, 3000);
      await sleep(150);
      const attempts = sb.state.callbackDeliveries;
      expect(attempts).toHaveLength(5);
      expect(attempts.every((a) => !a.ok && a.httpStatus === null && typeof a.error === 'string')).toBe(true);
    });
  });
});
