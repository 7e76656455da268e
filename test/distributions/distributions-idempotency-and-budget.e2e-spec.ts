import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DistributionsModule } from '../../src/distributions/distributions.module';
import { WalletLinksModule } from '../../src/wallet-links/wallet-links.module';
import { startTestService } from '../support/test-service';
import { apiUser, LINK_API_KEY, uniqueLinkEmail, type LinkHosts } from '../wallet-links/link-hosts';
import { type Api, PROVIDER_TIMEOUT_MS, useDistributionHosts } from './distributions-harness';

describe('distributions end to end', () => {
  const context = useDistributionHosts();
  const { fiatRequests, providerCalls, sentInit, initBody, fiatBody } = context;
  let hosts: LinkHosts;
  let admin: Api;
  beforeAll(() => ({ hosts, admin } = context));

  describe('idempotency', () => {
    it('the same key and body: the first answer again, one provider call', async () => {
      const key = randomUUID();
      const body = initBody();
      const first = await admin.createInit(body, key);
      const second = await admin.createInit(body, key);
      expect(second.status).toBe(201);
      expect(second.body).toEqual(first.body);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(sentInit(body.paymentId)).toHaveLength(1);
      expect(await hosts.service.prisma.distribution.count({ where: { paymentId: body.paymentId } })).toBe(1);
    });

    it('the same key with another body: 422 idempotency_key_reused, no provider call', async () => {
      const key = randomUUID();
      const body = initBody();
      expect((await admin.createInit(body, key)).status).toBe(201);
      const calls = providerCalls();
      const other = await admin.createInit({ ...body, amount: '20000' }, key);
      expect(other.status).toBe(422);
      expect(other.body.code).toBe('idempotency_key_reused');
      expect(providerCalls()).toBe(calls);
    });

    it('fiat: a replay makes no second redistribution', async () => {
      const key = randomUUID();
      const before = fiatRequests().length;
      const first = await admin.createFiat(fiatBody({ amount: '99.99' }), key);
      const again = await admin.createFiat(fiatBody({ amount: '99.99' }), key);
      expect(again.body).toEqual(first.body);
      expect(fiatRequests()).toHaveLength(before + 1);
    });

    it('a replayed timeout stays UNKNOWN and is not resent', async () => {
      const key = randomUUID();
      const body = initBody();
      hosts.link.state.injectFault({ path: '/api/agent/link/init', delayMs: PROVIDER_TIMEOUT_MS + 1_000 });
      const first = await admin.createInit(body, key);
      expect(first.body.status).toBe('UNKNOWN');
      const again = await admin.createInit(body, key);
      expect(again.body).toEqual(first.body);
      expect(sentInit(body.paymentId)).toHaveLength(1);
    });

    it('no Idempotency-Key: 400 idempotency_key_required', async () => {
      const res = await request(hosts.service.server).post('/v1/distributions').auth(admin.token, { type: 'bearer' }).send(initBody());
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('idempotency_key_required');
    });
  });

  describe('the shared /api/agent budget', () => {
    it('spent: 429 with Retry-After, nothing sent, nothing stored, and the Idempotency-Key is free for a retry', async () => {
      // The budget is counted in the database for every instance: this one allows 1 call an hour, already used.
      const limited = await startTestService(
        hosts.base,
        { PROVIDER_LINK_BASE_URL: hosts.link.url, PROVIDER_API_KEY: LINK_API_KEY, PROVIDER_AGENT_HOURLY_LIMIT: '1' },
        [WalletLinksModule, DistributionsModule],
      );
      try {
        const limitedAdmin = await apiUser(limited, admin.sub, 'admin');
        const calls = providerCalls();
        const links = hosts.link.state.requestsTo('/api/agent/link/new').length;
        const key = randomUUID();
        const body = initBody();
        const refused = await limitedAdmin.createInit(body, key);
        expect(refused.status).toBe(429);
        expect(refused.headers['retry-after']).toMatch(/^\d+$/);
        expect(refused.body).toMatchObject({ code: 'provider_budget_exhausted', outcomeKnown: true });
        expect((await limitedAdmin.createFiat(fiatBody())).status).toBe(429);
        const customer = await apiUser(limited);
        const link = await customer.createLink({ email: uniqueLinkEmail('budget'), phone: '650100009', phoneCountry: '+237' });
        expect(link.status).toBe(429);
        expect(providerCalls()).toBe(calls);
        expect(hosts.link.state.requestsTo('/api/agent/link/new')).toHaveLength(links);
        expect(await hosts.service.prisma.distribution.count({ where: { paymentId: body.paymentId } })).toBe(0);
        expect((await customer.listLinks()).body.items).toEqual([]);

        // Nothing happened: the same key and body go through on an instance with budget left.
        const retried = await admin.createInit(body, key);
        expect(retried.status).toBe(201);
        expect(retried.body.status).toBe('ACCEPTED');
        expect(sentInit(body.paymentId)).toHaveLength(1);
      } finally {
        await limited.close();
      }
    });
  });
});
