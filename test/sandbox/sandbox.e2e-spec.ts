import axios, { type AxiosInstance, type AxiosResponse } from 'axios';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLuhnValid } from '../../src/sandbox/sandbox.money';
import { SANDBOX_DEFAULTS, startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/sandbox.server';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';

const API_KEY = SANDBOX_DEFAULTS.apiKey;
const SP_TOKEN = SANDBOX_DEFAULTS.spAuthToken;
const CREDENTIALS = { public_apikey: SANDBOX_DEFAULTS.apiKey, private_secretkey: SANDBOX_DEFAULTS.secretKey };
const CALLBACK_DELAY = 30;

/** Sends a string body as is (axios would JSON-encode an invalid JSON string). */
const RAW_JSON = { headers: { 'content-type': 'application/json' }, transformRequest: [(d: unknown) => d] };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function http(sandbox: RunningSandbox): AxiosInstance {
  return axios.create({ baseURL: sandbox.url, validateStatus: () => true, timeout: 5000 });
}

async function tokenFor(api: AxiosInstance): Promise<string> {
  const res = await api.post('/api/action/auth', CREDENTIALS);
  expect(res.status).toBe(200);
  return res.data.token as string;
}

/** Local HTTP server receiving the sandbox's callbacks. */
interface CallbackReceiver {
  url: string;
  received: Array<{ method: string; path: string; headers: IncomingMessage['headers']; body: any }>;
  /** Status to answer for a received request; 200 by default. */
  statusFor: (entry: CallbackReceiver['received'][number]) => number;
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<CallbackReceiver> {
  const receiver = { received: [], statusFor: () => 200 } as unknown as CallbackReceiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const entry = { method: req.method!, path: req.url!, headers: req.headers, body: text ? JSON.parse(text) : null };
      receiver.received.push(entry);
      res.statusCode = receiver.statusFor(entry);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.waitFor = async (count, timeoutMs = 3000) => {
    const deadline = Date.now() + timeoutMs;
    while (receiver.received.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} callbacks, got ${receiver.received.length}`);
      await sleep(10);
    }
  };
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

let orderSeq = 0;
function payInBody(receiver: CallbackReceiver, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  orderSeq++;
  return {
    wallet: TEST_WALLETS.SUCCESS,
    amount: 1500,
    currency: 'XAF',
    order_id: `ORD-${Date.now()}-${orderSeq}`,
    description: 'Order',
    payer: 'Jane Doe',
    payerEmail: 'jane@example.com',
    successUrl: `${receiver.url}/cb/${orderSeq}/success?token=abc`,
    failureUrl: `${receiver.url}/cb/${orderSeq}/failure?token=abc`,
    ...overrides,
  };
}

describe('provider sandbox (HTTP)', () => {
  let sandbox: RunningSandbox;
  let api: AxiosInstance;
  let receiver: CallbackReceiver;
  let token: string;
  const extraSandboxes: RunningSandbox[] = [];

  async function extra(options: SandboxOptions): Promise<RunningSandbox> {
    const sb = await startSandbox({ port: 0, ...options });
    extraSandboxes.push(sb);
    return sb;
  }

  const agentHeaders = (t = token) => ({ authorization: `Bearer ${t}`, 'x-api-key': API_KEY });
  const payInHeaders = (t = token) => ({ ...agentHeaders(t), operation: '2', service: '20053' });
  const cardHeaders = (t = token) => ({ authorization: `Bearer ${t}`, 'x-sp-auth-token': SP_TOKEN });

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, callbackDelayMs: CALLBACK_DELAY, hangMs: 400 });
    api = http(sandbox);
    receiver = await startReceiver();
    token = await tokenFor(api);
  });

  afterEach(() => {
    receiver.statusFor = () => 200;
  });

  afterAll(async () => {
    await Promise.all(extraSandboxes.map((s) => s.close()));
    await sandbox.close();
    await receiver.close();
  });

  // ------------------------------------------------------------------ auth

  describe('auth', () => {
    it('issues an opaque token with an ISO-8601 UTC expiry one hour ahead, without Authorization', async () => {
      const before = sandbox.state.counters.authRequests;
      const res = await api.post('/api/action/auth', CREDENTIALS);
      expect(res.status).toBe(200);
      expect(typeof res.data.token).toBe('string');
      expect(res.data.token.length).toBeGreaterThanOrEqual(32);
      expect(res.data.data.expireAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
      const ttl = Date.parse(res.data.data.expireAt) - Date.now();
      expect(ttl).toBeGreaterThan(59 * 60 * 1000);
      expect(ttl).toBeLessThanOrEqual(60 * 60 * 1000);
      expect(sandbox.state.counters.authRequests).toBe(before + 1);
      const stats = await api.get('/__sandbox/stats');
      expect(stats.data.authRequests).toBe(before + 1);
    });

    it('rejects wrong or missing credentials with {error, message}', async () => {
      const wrong = await api.post('/api/action/auth', { ...CREDENTIALS, private_secretkey: 'nope' });
      expect(wrong.status).toBe(401);
      expect(wrong.data).toEqual({ error: 401, message: 'Invalid credentials' });
      const missing = await api.post('/api/action/auth', {});
      expect(missing.status).toBe(401);
      expect(missing.data).toEqual({ error: 401, message: 'Invalid credentials' });
      const malformed = await api.post('/api/action/auth', '{not json', RAW_JSON);
      expect(malformed.status).toBe(400);
      expect(malformed.data).toEqual({ error: 400, message: 'Malformed JSON body' });
    });

    it('expires tokens after tokenTtlMs, answering 401 in each family shape', async () => {
      const sb = await extra({ tokenTtlMs: 150 });
      const c = http(sb);
      const t = await tokenFor(c);
      expect((await c.get('/api/action/card/unknown', { headers: cardHeaders(t) })).status).toBe(404);
      await sleep(200);
      const card = await c.get('/api/action/card/unknown', { headers: cardHeaders(t) });
      expect(card.status).toBe(401);
      expect(card.data).toEqual({ error: 401, message: 'Unauthenticated' });
      const agent = await c.post('/api/agent/link/init', {}, { headers: agentHeaders(t) });
      expect(agent.status).toBe(401);
      expect(agent.data).toEqual({ success: false, message: 'Unauthenticated' });
      const linkNew = await c.get('/api/agent/link/new', { headers: agentHeaders(t), params: { email: 'a@b.co' } });
      expect(linkNew.status).toBe(401);
      expect(linkNew.data).toEqual({ code: '401', success: false, message: 'Unauthenticated' });
    });

    it('revokes every token in-process and over HTTP', async () => {
      const sb = await extra({});
      const c = http(sb);
      const t1 = await tokenFor(c);
      sb.state.revokeTokens();
      expect((await c.get('/api/action/card/x', { headers: cardHeaders(t1) })).status).toBe(401);
      const t2 = await tokenFor(c);
      expect((await c.get('/api/action/card/x', { headers: cardHeaders(t2) })).status).toBe(404);
      const revoked = await c.post('/__sandbox/tokens/revoke');
      expect(revoked.data).toEqual({ success: true, revoked: 1 });
      expect((await c.get('/api/action/card/x', { headers: cardHeaders(t2) })).status).toBe(401);
      expect((await c.get('/api/action/card/x', { headers: { 'x-sp-auth-token': SP_TOKEN } })).status).toBe(401);
    });
  });

  // ------------------------------------------------------------------ headers

  describe('header checks', () => {
    it('requires x-api-key on /api/agent routes', async () => {
      const payIn = await api.post('/api/agent/bills/v3', payInBody(receiver), {
        headers: { authorization: `Bearer ${token}`, operation: '2', service: '1' },
      });
      expect(payIn.status).toBe(401);
      expect(payIn.data).toEqual({ success: false, message: 'Invalid api key' });
      const linkNew = await api.get('/api/agent/link/new', {
        headers: { authorization: `Bearer ${token}`, 'x-api-key': 'wrong' },
        params: { email: 'x@example.com', phone: '690000000', phoneCountry: '+237' },
      });
      expect(linkNew.status).toBe(401);
      expect(linkNew.data).toEqual({ code: '401', success: false, message: 'Invalid api key' });
    });

    it('requires the right x-sp-auth-token on card routes (header names case-insensitive)', async () => {
      const wrong = await api.get('/api/action/card/user/none', {
        headers: { Authorization: `Bearer ${token}`, 'X-SP-AUTH-TOKEN': 'wrong' },
      });
      expect(wrong.status).toBe(401);
      expect(wrong.data).toEqual({ error: 401, message: 'Invalid sp auth token' });
      const right = await api.get('/api/action/card/user/none', {
        headers: { Authorization: `Bearer ${token}`, 'X-SP-AUTH-TOKEN': SP_TOKEN },
      });
      expect(right.status).toBe(404);
      expect(right.data).toEqual({ error: 404, message: 'User not found' });
    });

    it('answers shape (a) for a wrong or missing operation header, shape (b) for a bad service header', async () => {
      for (const operation of ['1', undefined]) {
        const res = await api.post('/api/agent/bills/v3', payInBody(receiver), {
          headers: { ...agentHeaders(), service: '1', ...(operation ? { operation } : {}) },
        });
        expect(res.status).toBe(400);
        expect(res.data).toEqual({ success: false, message: 'Invalid operation provide' });
      }
      const body = payInBody(receiver);
      const badService = await api.post('/api/agent/bills/v3', body, { headers: { ...payInHeaders(), service: 'abc' } });
      expect(badService.status).toBe(400);
      expect(badService.data).toMatchObject({
        success: false,
        code: 400,
        status: 'FAILURE',
        message: 'Invalid service header',
        data: { external_reference: body.order_id, amount: '1500', currency: 'XAF' },
      });
      const badOtp = await api.post('/api/agent/bills/v3', payInBody(receiver), { headers: { ...payInHeaders(), otp: '12a' } });
      expect(badOtp.status).toBe(400);
      expect(badOtp.data.message).toBe('Invalid otp header');
    });
  });

  // ------------------------------------------------------------------ pay-in

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

  // ------------------------------------------------------------------ cards

  describe('cards', () => {
    const userBody = {
      first_name: 'Jane',
      last_name: 'Doe',
      email: 'jane@example.com',
      country_code: 'CM',
      contact: '+237690000000',
      dob: '1990-04-12',
      is_business: false,
      billing_adress: '1 Main Street',
      billing_city: 'Douala',
      billing_country: 'CM',
      id_number: 'ID123',
      business_name: '',
      billing_state: 'Littoral',
      billing_postal_code: '00000',
    };

    async function createUser(): Promise<{ user_id: string; reference: string }> {
      const res = await api.post('/api/action/card/user', userBody, { headers: cardHeaders() });
      expect(res.status).toBe(200);
      return res.data;
    }

    async function createCard(userId: string, balance: string, currency: string): Promise<AxiosResponse> {
      return api.post(`/api/action/card/${userId}`, { balance, currency }, { headers: cardHeaders() });
    }

    const op = (id: string, params: Record<string, string | undefined>) =>
      api.get(`/api/action/card/transaction/${id}`, { headers: cardHeaders(), params });

    it('validates card users', async () => {
      for (const [override, message] of [
        [{ email: 'nope' }, /email/],
        [{ country_code: 'CMR' }, /country_code/],
        [{ dob: '12/04/1990' }, /dob/],
        [{ dob: '1990-02-30' }, /dob/],
        [{ first_name: '' }, /first_name/],
        [{ is_business: 'no' }, /is_business/],
      ] as Array<[Record<string, unknown>, RegExp]>) {
        const res = await api.post('/api/action/card/user', { ...userBody, ...override }, { headers: cardHeaders() });
        expect(res.status).toBe(400);
        expect(res.data).toEqual({ error: 400, message: expect.stringMatching(message) });
      }
      const malformed = await api.post('/api/action/card/user', '{', {
        ...RAW_JSON,
        headers: { ...cardHeaders(), 'content-type': 'application/json' },
      });
      expect(malformed.status).toBe(400);
      expect(malformed.data).toEqual({ error: 400, message: 'Malformed JSON body' });
    });

    it('runs a EUR card lifecycle with exact balances', async () => {
      const user = await createUser();
      expect(user.user_id).toEqual(expect.any(String));
      expect(user.reference).toEqual(expect.any(String));

      const numberBalance = await api.post(
        `/api/action/card/${user.user_id}`,
        { balance: 10, currency: 'EUR' },
        { headers: cardHeaders() },
      );
      expect(numberBalance.status).toBe(400);
      expect(numberBalance.data.error).toBe(400);
      const unknownUser = await createCard('usr_unknown', '0', 'EUR');
      expect(unknownUser.status).toBe(404);
      expect(unknownUser.data).toEqual({ error: 404, message: 'User not found' });

      const created = await createCard(user.user_id, '0.00', 'EUR');
      expect(created.status).toBe(200);
      const { card_id, card_number, expiry, cvv } = created.data;
      expect(Object.keys(created.data).sort()).toEqual(['card_id', 'card_number', 'cvv', 'expiry']);
      expect(card_number).toMatch(/^4\d{15}$/);
      expect(isLuhnValid(card_number)).toBe(true);
      expect(cvv).toMatch(/^\d{3}$/);
      const now = new Date();
      expect(expiry).toBe(`${String(now.getUTCMonth() + 1).padStart(2, '0')}/${String((now.getUTCFullYear() + 3) % 100).padStart(2, '0')}`);

      const readUser = await api.get(`/api/action/card/user/${user.reference}`, { headers: cardHeaders() });
      expect(readUser.status).toBe(200);
      expect(readUser.data).toEqual({
        user_id: user.user_id,
        first_name: 'Jane',
        last_name: 'Doe',
        email: 'jane@example.com',
        cards: [card_id],
      });

      const topup = await op(card_id, { operation: 'topup', amount: '10.50', currency: 'EUR' });
      expect(topup.status).toBe(200);
      expect(topup.data).toEqual({ new_balance: '10.50', transaction_id: expect.any(String) });
      expect((await op(card_id, { operation: 'topup', amount: '0.1', currency: 'EUR' })).data.new_balance).toBe('10.60');
      expect((await op(card_id, { operation: 'topup', amount: '0.2', currency: 'eur' })).data.new_balance).toBe('10.80');
      const withdraw = await op(card_id, { operation: 'withdraw', amount: '3.25', currency: 'EUR' });
      expect(withdraw.data.new_balance).toBe('7.55');

      const tooMuch = await op(card_id, { operation: 'withdraw', amount: '7.56', currency: 'EUR' });
      expect(tooMuch.status).toBe(400);
      expect(tooMuch.data).toEqual({ error: 400, message: 'Insufficient balance' });
      for (const params of [
        { operation: 'topup', amount: '1.005', currency: 'EUR' },
        { operation: 'topup', amount: '-1', currency: 'EUR' },
        { operation: 'topup', amount: '0', currency: 'EUR' },
        { operation: 'topup', amount: 'abc', currency: 'EUR' },
        { operation: 'topup', amount: '1', currency: 'USD' },
        { operation: 'topup', amount: '1' },
        { operation: 'withdraw', currency: 'EUR' },
        { operation: 'explode' },
        {},
      ]) {
        const res = await op(card_id, params);
        expect(res.status).toBe(400);
        expect(res.data.error).toBe(400);
      }

      const details = await api.get(`/api/action/card/${card_id}`, { headers: cardHeaders() });
      expect(details.data).toEqual({ card_id, card_number, expiry, balance: '7.55', currency: 'EUR', status: 'active' });

      const list = await op(card_id, { operation: 'transactions' });
      expect(list.data.transactions.map((t: any) => [t.type, t.amount, t.balance_after, t.currency])).toEqual([
        ['topup', '10.50', '10.50', 'EUR'],
        ['topup', '0.10', '10.60', 'EUR'],
        ['topup', '0.20', '10.80', 'EUR'],
        ['withdraw', '3.25', '7.55', 'EUR'],
      ]);
      expect(list.data.transactions[0]).toEqual({
        transaction_id: topup.data.transaction_id,
        type: 'topup',
        amount: '10.50',
        currency: 'EUR',
        balance_after: '10.50',
        created_at: expect.any(String),
      });

      const disabled = await op(card_id, { operation: 'disabled' });
      expect(disabled.data).toEqual({ success: true, status: 'disabled', message: expect.any(String) });
      const refused = await op(card_id, { operation: 'topup', amount: '1', currency: 'EUR' });
      expect(refused.status).toBe(400);
      expect(refused.data).toEqual({ error: 400, message: 'Card is disabled' });
      expect((await op(card_id, { operation: 'enabled' })).data).toMatchObject({ success: true, status: 'active' });
      expect((await op(card_id, { operation: 'topup', amount: '1', currency: 'EUR' })).data.new_balance).toBe('8.55');

      expect((await op(card_id, { operation: 'terminate' })).data).toMatchObject({ success: true, status: 'terminated' });
      for (const params of [{ operation: 'topup', amount: '1', currency: 'EUR' }, { operation: 'enabled' }, { operation: 'terminate' }]) {
        const res = await op(card_id, params);
        expect(res.status).toBe(400);
        expect(res.data).toEqual({ error: 400, message: 'Card is terminated' });
      }
      expect((await api.get(`/api/action/card/${card_id}`, { headers: cardHeaders() })).data.status).toBe('terminated');
    });

    it('keeps XAF in whole units and refuses decimals', async () => {
      const user = await createUser();
      expect((await createCard(user.user_id, '100.50', 'XAF')).status).toBe(400);
      const { card_id } = (await createCard(user.user_id, '1000', 'XAF')).data;
      expect((await op(card_id, { operation: 'topup', amount: '1500', currency: 'XAF' })).data.new_balance).toBe('2500');
      const decimals = await op(card_id, { operation: 'topup', amount: '10.5', currency: 'XAF' });
      expect(decimals.status).toBe(400);
      expect(decimals.data.message).toMatch(/decimals/);
      expect((await op(card_id, { operation: 'withdraw', amount: '2500', currency: 'XAF' })).data.new_balance).toBe('0');
      expect((await api.get(`/api/action/card/${card_id}`, { headers: cardHeaders() })).data.balance).toBe('0');
    });

    it('does not let /card/:id swallow /card/user/... or /card/transaction/...', async () => {
      const missingUser = await api.get('/api/action/card/user/CU000', { headers: cardHeaders() });
      expect(missingUser.data).toEqual({ error: 404, message: 'User not found' });
      const missingCard = await api.get('/api/action/card/transaction/card_000', {
        headers: cardHeaders(),
        params: { operation: 'transactions' },
      });
      expect(missingCard.data).toEqual({ error: 404, message: 'Card not found' });
      expect((await api.get('/api/action/card/card_000', { headers: cardHeaders() })).data).toEqual({
        error: 404,
        message: 'Card not found',
      });
    });

    it('uses configurable card query parameter names', async () => {
      const sb = await extra({ cardOperationParam: 'op', cardAmountParam: 'value', cardCurrencyParam: 'ccy' });
      const c = http(sb);
      const t = await tokenFor(c);
      const headers = cardHeaders(t);
      const user = (await c.post('/api/action/card/user', userBody, { headers })).data;
      const card = (await c.post(`/api/action/card/${user.user_id}`, { balance: '5', currency: 'USD' }, { headers })).data;
      const ok = await c.get(`/api/action/card/transaction/${card.card_id}`, {
        headers,
        params: { op: 'topup', value: '2.5', ccy: 'USD' },
      });
      expect(ok.data).toEqual({ new_balance: '7.50', transaction_id: expect.any(String) });
      const defaults = await c.get(`/api/action/card/transaction/${card.card_id}`, {
        headers,
        params: { operation: 'topup', amount: '1', currency: 'USD' },
      });
      expect(defaults.status).toBe(400);
      expect(defaults.data.message).toMatch(/^op /);
      const noAmount = await c.get(`/api/action/card/transaction/${card.card_id}`, {
        headers,
        params: { op: 'withdraw', amount: '1', ccy: 'USD' },
      });
      expect(noAmount.data).toEqual({ error: 400, message: 'value is required' });
    });
  });

  // ------------------------------------------------------------------ wallet link

  describe('wallet link and redistribution', () => {
    const linkNew = (params: Record<string, string | undefined>) => api.get('/api/agent/link/new', { headers: agentHeaders(), params });

    it('validates link/new, refuses a second link of the same email', async () => {
      for (const params of [
        { email: 'bad', phone: '690000000', phoneCountry: '+237' },
        { email: 'a@example.com', phone: '69O000000', phoneCountry: '+237' },
        { email: 'a@example.com', phone: '690000000', phoneCountry: '237' },
        { email: 'a@example.com', phone: '690000000' },
      ]) {
        const res = await linkNew(params);
        expect(res.status).toBe(400);
        expect(res.data).toEqual({ code: '400', success: false, message: expect.any(String) });
      }
      const ok = await linkNew({ email: 'link1@example.com', phone: '690000001', phoneCountry: '+237' });
      expect(ok.status).toBe(200);
      expect(ok.data).toEqual({
        success: true,
        data: { apikey: expect.any(String), matricule: expect.stringMatching(/^MAT\d+$/) },
        message: expect.any(String),
      });
      const again = await linkNew({ email: 'LINK1@example.com', phone: '690000002', phoneCountry: '+237' });
      expect(again.status).toBe(400);
      expect(again.data).toEqual({ code: '400', success: false, message: 'User already linked' });
    });

    it('validates and accepts link/init and fiat-distribution', async () => {
      const m = async (email: string) => (await linkNew({ email, phone: '690000003', phoneCountry: '+237' })).data.data.matricule as string;
      const [a, b, c] = [await m('d1@example.com'), await m('d2@example.com'), await m('d3@example.com')];
      const init = (body: unknown) => api.post('/api/agent/link/init', body, { headers: agentHeaders() });
      const base = { payment_receiver: a, payment_id: 'PAY-1', amount: 1000 };
      const bad: Array<[unknown, RegExp]> = [
        [{ ...base, distribution: [{ matricule: 'MAT000', rate: 10 }] }, /Unknown matricule/],
        [
          {
            ...base,
            distribution: [
              { matricule: b, rate: 60 },
              { matricule: c, rate: 40.01 },
            ],
          },
          /exceed 100/,
        ],
        [{ ...base, distribution: [{ matricule: b, rate: 0 }] }, /rate/],
        [{ ...base, distribution: [{ matricule: b, rate: '10' }] }, /rate/],
        [
          {
            ...base,
            distribution: [
              { matricule: b, rate: 10 },
              { matricule: b, rate: 10 },
            ],
          },
          /more than once/,
        ],
        [{ ...base, distribution: [] }, /distribution/],
        [{ ...base, amount: '1000', distribution: [{ matricule: b, rate: 10 }] }, /amount/],
        [{ ...base, payment_id: undefined, distribution: [{ matricule: b, rate: 10 }] }, /payment_id/],
      ];
      for (const [body, message] of bad) {
        const res = await init(body);
        expect(res.status).toBe(400);
        expect(res.data).toEqual({ success: false, message: expect.stringMatching(message) });
      }
      const thirds = [
        { matricule: a, rate: 33.33 },
        { matricule: b, rate: 33.33 },
        { matricule: c, rate: 33.34 },
      ];
      const ok = await init({ ...base, distribution: thirds });
      expect(ok.status).toBe(200);
      expect(ok.data).toEqual({ success: true, message: expect.any(String) });
      expect(sandbox.state.linkInits.get('PAY-1')?.distribution).toEqual(thirds);
      const dup = await init({ ...base, distribution: thirds });
      expect(dup.status).toBe(400);
      expect(dup.data).toEqual({ success: false, message: 'Duplicate payment_id' });

      const fiat = (data: unknown) => api.post('/api/agent/link/fiat-distribution', { data }, { headers: agentHeaders() });
      const good = { payer: 'Jane', currency: 'XAF', amount: 5000, distribution: [{ matricule: b, rate: 50 }] };
      expect((await fiat(good)).data).toEqual({ success: true, message: expect.any(String) });
      for (const data of [
        { ...good, currency: 'XAFF' },
        { ...good, amount: -1 },
        { ...good, payer: '' },
        { ...good, distribution: [{ matricule: 'MATX', rate: 5 }] },
      ]) {
        const res = await fiat(data);
        expect(res.status).toBe(400);
        expect(res.data.success).toBe(false);
      }
      const noData = await api.post('/api/agent/link/fiat-distribution', good, { headers: agentHeaders() });
      expect(noData.status).toBe(400);
      expect(sandbox.state.fiatDistributions).toHaveLength(1);
    });
  });

  // ------------------------------------------------------------------ limits, faults, control

  it('enforces the agent hourly limit per IP and leaves other routes alone', async () => {
    const sb = await extra({ agentHourlyLimit: 3 });
    const c = http(sb);
    const t = await tokenFor(c);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await c.post('/api/agent/link/init', {}, { headers: agentHeaders(t) })).status);
    }
    expect(statuses).toEqual([400, 400, 400, 429]);
    const limited = await c.post('/api/agent/bills/v3', {}, { headers: payInHeaders(t) });
    expect(limited.status).toBe(429);
    expect(limited.data).toEqual({ success: false, message: 'Too many requests' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await c.get('/api/action/card/x', { headers: cardHeaders(t) })).status).toBe(404);
    expect(sb.state.counters.rateLimited).toBe(2);
  });

  it('injects faults in-process and over HTTP, after recording the request', async () => {
    const sb = await extra({});
    const c = http(sb);
    sb.state.injectFault({ path: '/api/action/auth', status: 503, body: { error: 503, message: 'Maintenance' } });
    const faulted = await c.post('/api/action/auth', CREDENTIALS);
    expect(faulted.status).toBe(503);
    expect(faulted.data).toEqual({ error: 503, message: 'Maintenance' });
    expect(sb.state.requestsTo('/api/action/auth')).toHaveLength(1);
    expect(sb.state.counters.authRequests).toBe(1);
    const t = await tokenFor(c);

    const injected = await c.post('/__sandbox/faults', {
      path: '/api/action/card/*',
      method: 'GET',
      times: 2,
      status: 502,
      rawBody: '<html>Bad Gateway</html>',
      contentType: 'text/html',
    });
    expect(injected.status).toBe(201);
    for (let i = 0; i < 2; i++) {
      const res = await c.get('/api/action/card/x', { headers: cardHeaders(t) });
      expect(res.status).toBe(502);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.data).toBe('<html>Bad Gateway</html>');
    }
    expect((await c.get('/api/action/card/x', { headers: cardHeaders(t) })).status).toBe(404);

    sb.state.injectFault({ path: '/api/action/card/x', dropConnection: true });
    await expect(c.get('/api/action/card/x', { headers: cardHeaders(t) })).rejects.toMatchObject({
      code: expect.stringMatching(/ECONNRESET|ERR_BAD_RESPONSE|socket hang up/),
    });

    sb.state.injectFault({ path: '/api/action/card/x', delayMs: 200 });
    const started = Date.now();
    const delayed = await c.get('/api/action/card/x', { headers: cardHeaders(t) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(delayed.data).toEqual({ error: 404, message: 'Card not found' });

    const invalid = await c.post('/__sandbox/faults', { path: 'no-slash' });
    expect(invalid.status).toBe(400);
    expect(sb.state.counters.faultsApplied).toBe(5);
  });

  it('answers unknown routes with 404 JSON, lists and resets recorded requests', async () => {
    const sb = await extra({});
    const c = http(sb);
    const unknown = await c.get('/api/action/nothing?x=1');
    expect(unknown.status).toBe(404);
    expect(unknown.data).toEqual({ error: 404, message: expect.any(String) });
    const unknownAgent = await c.post('/api/agent/nothing', {});
    expect(unknownAgent.status).toBe(404);
    expect(unknownAgent.data).toEqual({ success: false, message: expect.any(String) });
    await c.post('/api/action/auth', CREDENTIALS, { headers: { 'X-Trace': 'abc' } });

    const all = (await c.get('/__sandbox/requests')).data;
    expect(all.map((r: any) => r.path)).toEqual(['/api/action/nothing', '/api/agent/nothing', '/api/action/auth']);
    expect(all[0]).toMatchObject({
      id: expect.any(Number),
      at: expect.any(String),
      method: 'GET',
      query: { x: '1' },
      body: null,
      ip: '127.0.0.1',
    });
    expect(all[2]).toMatchObject({ method: 'POST', body: CREDENTIALS, headers: { 'x-trace': 'abc' } });
    expect((await c.get('/__sandbox/requests', { params: { path: '/api/action/*' } })).data).toHaveLength(2);

    expect((await c.post('/__sandbox/reset')).data).toEqual({ success: true, all: false });
    expect(sb.state.requests).toHaveLength(0);
    expect(sb.state.tokens.size).toBe(1);
    await c.post('/__sandbox/reset', { all: true });
    expect(sb.state.tokens.size).toBe(0);
    expect(sb.state.counters.authRequests).toBe(0);
  });
});
