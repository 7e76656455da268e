import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { databaseDump } from '../support/database-dump';
import { apiUser, type LinkHosts } from '../wallet-links/link-hosts';
import { type Api, useDistributionHosts } from './distributions-harness';

describe('distributions end to end', () => {
  const context = useDistributionHosts();
  const { providerCalls, initBody, fiatBody } = context;
  let hosts: LinkHosts;
  let admin: Api;
  beforeAll(() => ({ hosts, admin } = context));

  describe('roles and reads', () => {
    it('customer and finance: 403 on both POSTs, nothing sent', async () => {
      const customer = await apiUser(hosts.service);
      const finance = await apiUser(hosts.service, `fin_${randomUUID().slice(0, 6)}`, 'finance');
      const calls = providerCalls();
      for (const user of [customer, finance]) {
        const init = await user.createInit(initBody());
        expect(init.status).toBe(403);
        expect(init.body.code).toBe('forbidden');
        expect((await user.createFiat(fiatBody())).status).toBe(403);
      }
      expect(providerCalls()).toBe(calls);
    });

    it('finance and admin read one and all, with filters and cursor pagination; a customer cannot read them', async () => {
      const finance = await apiUser(hosts.service, `fin_${randomUUID().slice(0, 6)}`, 'finance');
      const since = new Date(Date.now() - 1).toISOString();
      const a = (await admin.createInit(initBody())).body;
      const b = (await admin.createFiat(fiatBody())).body;
      const c = (await admin.createInit(initBody({ distribution: [{ matricule: 'MAT00000001', rate: 1 }] }))).body;
      expect(c.status).toBe('REJECTED');

      expect((await finance.getDistribution(a.id)).body).toEqual(a);
      expect((await admin.getDistribution(b.id)).body).toEqual(b);
      expect((await finance.getDistribution(randomUUID())).status).toBe(404);
      expect((await finance.getDistribution('nope')).status).toBe(404);

      const page1 = await finance.listDistributions({ from: since, limit: 2 });
      expect(page1.status).toBe(200);
      expect(page1.body.items.map((d: { id: string }) => d.id)).toEqual([c.id, b.id]);
      const page2 = await finance.listDistributions({ from: since, limit: 2, cursor: page1.body.nextCursor });
      expect(page2.body.items.map((d: { id: string }) => d.id)).toContain(a.id);

      const fiat = await finance.listDistributions({ kind: 'fiat', from: since });
      expect(fiat.body.items.every((d: { kind: string }) => d.kind === 'fiat')).toBe(true);
      expect(fiat.body.items.map((d: { id: string }) => d.id)).toContain(b.id);
      const failed = await finance.listDistributions({ status: 'REJECTED', from: since });
      expect(failed.body.items.map((d: { id: string }) => d.id)).toContain(c.id);
      expect(failed.body.items.every((d: { status: string }) => d.status === 'REJECTED')).toBe(true);
      const none = await finance.listDistributions({ to: since, from: since });
      expect(none.body).toEqual({ items: [], nextCursor: null });
      expect((await finance.listDistributions({ status: 'DONE' })).body.errors[0].field).toBe('status');

      const customer = await apiUser(hosts.service);
      expect((await customer.getDistribution(a.id)).status).toBe(403);
      expect((await customer.listDistributions()).status).toBe(403);
    });

    it('Swagger documents every route with its auth, Idempotency-Key and body schema', async () => {
      const doc = (await request(hosts.service.server).get('/docs-json')).body;
      for (const [path, method] of [
        ['/v1/wallet-links', 'post'],
        ['/v1/wallet-links', 'get'],
        ['/v1/wallet-links/{id}', 'get'],
        ['/v1/distributions', 'post'],
        ['/v1/distributions/fiat', 'post'],
        ['/v1/distributions', 'get'],
        ['/v1/distributions/{id}', 'get'],
      ]) {
        expect(doc.paths[path]?.[method]?.security).toEqual([{ bearer: [] }]);
      }
      const init = doc.paths['/v1/distributions'].post;
      expect(init.parameters).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true })]),
      );
      const schema = doc.components.schemas.CreateInitDistributionDto;
      expect(Object.keys(schema.properties).sort()).toEqual(['amount', 'currency', 'distribution', 'paymentId', 'paymentReceiver']);
      expect(Object.keys(doc.components.schemas.CreateFiatDistributionDto.properties).sort()).toEqual([
        'amount',
        'currency',
        'distribution',
        'payer',
      ]);
      expect(Object.keys(doc.components.schemas.WalletLinkDto.properties)).not.toContain('apikey');
    });

    it('no wallet-link apikey anywhere in the database or the logs', async () => {
      const dump = await databaseDump(hosts.service);
      expect(dump).toContain('distribution_shares');
      for (const link of hosts.link.state.walletLinks.values()) {
        expect(dump).not.toContain(link.apikey);
        expect(hosts.service.logs.text).not.toContain(link.apikey);
      }
    });
  });
});
