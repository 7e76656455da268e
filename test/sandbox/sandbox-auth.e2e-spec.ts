import type { AxiosInstance } from 'axios';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { SP_TOKEN, CREDENTIALS, RAW_JSON, sleep, http, tokenFor, payInBody, type CallbackReceiver, useSandbox } from './sandbox-harness';

describe('provider sandbox (HTTP)', () => {
  const context = useSandbox();
  const { extra, agentHeaders, payInHeaders, cardHeaders } = context;
  let sandbox: RunningSandbox;
  let api: AxiosInstance;
  let receiver: CallbackReceiver;
  let token: string;
  beforeAll(() => ({ sandbox, api, receiver, token } = context));

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
});
