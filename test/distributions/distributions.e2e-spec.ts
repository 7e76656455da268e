import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DistributionsModule } from '../../src/distributions/distributions.module';
import { WalletLinksModule } from '../../src/wallet-links/wallet-links.module';
import { startTestService } from '../support/test-service';
import { apiUser, databaseDump, LINK_API_KEY, startLinkHosts, uniqueLinkEmail, type LinkHosts } from '../wallet-links/link-hosts';

type Api = Awaited<ReturnType<typeof apiUser>>;

describe('distributions end to end', () => {
  let hosts: LinkHosts;
  let admin: Api;
  /** Matricules linked through POST /v1/wallet-links: known to the provider. */
  let m: [string, string, string];
  const initRequests = () => hosts.link.state.requestsTo('/api/agent/link/init');
  const fiatRequests = () => hosts.link.state.requestsTo('/api/agent/link/fiat-distribution');
  const providerCalls = () => initRequests().length + fiatRequests().length;
  const sentInit = (paymentId: string) => initRequests().filter((r) => (r.body as { payment_id?: string }).payment_id === paymentId);
  const initBody = (overrides: Record<string, unknown> = {}) => ({
    paymentReceiver: m[0],
    paymentId: `pay_${randomUUID()}`,
    amount: '10000',
    currency: 'XAF',
    distribution: [
      { matricule: m[0], rate: '33.33' },
      { matricule: m[1], rate: 33.33 },
      { matricule: m[2], rate: '33.34' },
    ],
    ...overrides,
  });
  const fiatBody = (overrides: Record<string, unknown> = {}) => ({
    payer: 'Awa Ndiaye',
    currency: 'EUR',
    amount: '250.75',
    distribution: [
      { matricule: m[1], rate: 60 },
      { matricule: m[2], rate: '40' },
    ],
    ...overrides,
  });
  const storedShares = async (id: string) =>
    (await hosts.service.prisma.distributionShare.findMany({ where: { distributionId: id }, orderBy: { position: 'asc' } })).map(
      (s) => s.shareMinor,
    );

  beforeAll(async () => {
    hosts = await startLinkHosts({ PROVIDER_TIMEOUT_MS: '500' });
    const owner = await apiUser(hosts.service);
    const links = [];
    for (const phone of ['650100001', '650100002', '650100003']) {
      const res = await owner.createLink({ email: uniqueLinkEmail('benef'), phone, phoneCountry: '+237' });
      expect(res.status).toBe(201);
      links.push(res.body.matricule as string);
    }
    m = links as [string, string, string];
    admin = await apiUser(hosts.service, `admin_${randomUUID().slice(0, 6)}`, 'admin');
  });
  beforeEach(async () => {
    hosts.link.state.clearFaults();
    await hosts.syncTokens();
  });
  afterAll(async () => {
    await hosts?.close();
  });

  describe('init', () => {
    it('POST {link_base_url}/api/agent/link/init with bearer, x-api-key and the exact body; 201 ACCEPTED with shares and rates as decimal strings', async () => {
      const body = initBody();
      const res = await admin.createInit(body);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        kind: 'init',
        status: 'ACCEPTED',
        paymentReceiver: m[0],
        paymentId: body.paymentId,
        payer: null,
        amount: '10000',
        currency: 'XAF',
        distribution: [
          { position: 1, matricule: m[0], rate: '33.33', share: '3333' },
          { position: 2, matricule: m[1], rate: '33.33', share: '3333' },
          { position: 3, matricule: m[2], rate: '33.34', share: '3334' },
        ],
        remainder: '0',
        providerMessage: 'Transaction initialised successfully',
        failureReason: null,
        createdBy: admin.sub,
        createdAt: expect.any(String),
        completedAt: expect.any(String),
      });

      const [sent] = sentInit(body.paymentId);
      expect(sent.method).toBe('POST');
      expect(sent.body).toEqual({
        payment_receiver: m[0],
        payment_id: body.paymentId,
        amount: 10000,
        distribution: [
          { matricule: m[0], rate: 33.33 },
          { matricule: m[1], rate: 33.33 },
          { matricule: m[2], rate: 33.34 },
        ],
      });
      expect(typeof (sent.body as { amount: unknown }).amount).toBe('number');
      expect(sent.headers).toMatchObject({
        authorization: `Bearer ${hosts.bearer()}`,
        'x-api-key': LINK_API_KEY,
        'content-type': expect.stringMatching(/^application\/json/),
      });
      expect(sent.headers['x-sp-auth-token']).toBeUndefined();
      expect(hosts.base.state.requestsTo('/api/agent/link/*')).toHaveLength(0);

      const row = await hosts.service.prisma.distribution.findUniqueOrThrow({ where: { id: res.body.id } });
      expect(row).toMatchObject({
        kind: 'init',
        status: 'ACCEPTED',
        currency: 'XAF',
        createdBy: admin.sub,
        receiverShareMinor: 0n,
        failureReason: null,
      });
      expect(row.amount.toFixed()).toBe('10000');
      expect(row.providerRequest).toEqual(sent.body);
      expect(row.providerResponse).toEqual({ success: true, message: 'Transaction initialised successfully' });
      expect(row.completedAt).toBeInstanceOf(Date);
      expect(await storedShares(res.body.id)).toEqual([3333n, 3333n, 3334n]);
      const rates = await hosts.service.prisma.distributionShare.findMany({
        where: { distributionId: res.body.id },
        orderBy: { position: 'asc' },
      });
      expect(rates.map((s) => [s.matricule, s.rate.toFixed()])).toEqual([
        [m[0], '33.33'],
        [m[1], '33.33'],
        [m[2], '33.34'],
      ]);
    });

    it('stores the distribution PENDING with every share before the provider is called', async () => {
      const body = initBody();
      hosts.link.state.injectFault({ path: '/api/agent/link/init', delayMs: 300 });
      const pending = admin.createInit(body).then((res) => res);
      await hosts.link.state.waitForRequest(
        (r) => r.path === '/api/agent/link/init' && (r.body as { payment_id?: string }).payment_id === body.paymentId,
      );
      const during = await hosts.service.prisma.distribution.findUniqueOrThrow({
        where: { paymentId: body.paymentId },
        include: { shares: true },
      });
      expect(during.status).toBe('PENDING');
      expect(during.completedAt).toBeNull();
      expect(during.shares.map((s) => s.shareMinor).sort()).toEqual([3333n, 3333n, 3334n]);
      const res = await pending;
      expect(res.body.status).toBe('ACCEPTED');
    });

    it.each([
      ['100 XAF at 33/33/33', '100', 'XAF', ['33', '33', '33'], ['33', '33', '33'], '1', [33n, 33n, 33n], 1n],
      ['1 XAF at 50/50', '1', 'XAF', ['50', '50'], ['1', '0'], '0', [1n, 0n], 0n],
      ['100.01 EUR at 50/50', '100.01', 'EUR', ['50', '50'], ['50.01', '50.00'], '0.00', [5001n, 5000n], 0n],
      ['12.5 EUR at 10/20', 12.5, 'EUR', ['10', '20'], ['1.25', '2.50'], '8.75', [125n, 250n], 875n],
      ['0.03 EUR at 33.33 ×3', '0.03', 'EUR', ['33.33', '33.33', '33.33'], ['0.01', '0.01', '0.00'], '0.01', [1n, 1n, 0n], 1n],
    ])('exact shares: %s', async (_name, amount, currency, rates, shares, remainder, minor, receiverMinor) => {
      const body = initBody({ amount, currency, distribution: rates.map((rate, i) => ({ matricule: m[i], rate })) });
      const res = await admin.createInit(body);
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('ACCEPTED');
      expect(res.body.distribution.map((d: { share: string }) => d.share)).toEqual(shares);
      expect(res.body.remainder).toBe(remainder);
      expect(await storedShares(res.body.id)).toEqual(minor);
      const row = await hosts.service.prisma.distribution.findUniqueOrThrow({ where: { id: res.body.id } });
      expect(row.receiverShareMinor).toBe(receiverMinor);
      // The exact amount as a JSON number, and rates as JSON numbers.
      const [sent] = sentInit(body.paymentId);
      expect((sent.body as { amount: number }).amount).toBe(Number(amount));
      expect((sent.body as { distribution: { rate: number }[] }).distribution.map((d) => d.rate)).toEqual(rates.map(Number));
    });

    it('is deterministic: the same request gives the same shares every time', async () => {
      const results = [];
      for (let i = 0; i < 3; i++) {
        const res = await admin.createInit(
          initBody({
            amount: '1',
            distribution: [
              { matricule: m[0], rate: 50 },
              { matricule: m[1], rate: 50 },
            ],
          }),
        );
        results.push(res.body.distribution.map((d: { share: string }) => d.share));
      }
      expect(results).toEqual([
        ['1', '0'],
        ['1', '0'],
        ['1', '0'],
      ]);
    });

    it('a paymentId already used: 409 distribution_payment_id_exists and no second provider call', async () => {
      const body = initBody();
      expect((await admin.createInit(body)).status).toBe(201);
      const again = await admin.createInit({ ...body, amount: '5000' });
      expect(again.status).toBe(409);
      expect(again.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(again.body.code).toBe('distribution_payment_id_exists');
      expect(sentInit(body.paymentId)).toHaveLength(1);
      expect(await hosts.service.prisma.distribution.count({ where: { paymentId: body.paymentId } })).toBe(1);
    });

    it("the provider's refusal {success:false, message}: 201 REJECTED with its message", async () => {
      const body = initBody({ distribution: [{ matricule: 'MAT00000000', rate: 10 }] });
      const res = await admin.createInit(body);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        status: 'REJECTED',
        failureReason: 'Unknown matricule MAT00000000',
        providerMessage: 'Unknown matricule MAT00000000',
      });
      const row = await hosts.service.prisma.distribution.findUniqueOrThrow({ where: { id: res.body.id } });
      expect(row.providerResponse).toEqual({ success: false, message: 'Unknown matricule MAT00000000' });
      expect(row.status).toBe('REJECTED');
    });

    it('a provider timeout: UNKNOWN stored (it may have happened), one call only, never REJECTED', async () => {
      const body = initBody();
      hosts.link.state.injectFault({ path: '/api/agent/link/init', delayMs: 1500 });
      const res = await admin.createInit(body);
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('UNKNOWN');
      expect(res.body.failureReason).toMatch(/did not answer/);
      const row = await hosts.service.prisma.distribution.findUniqueOrThrow({ where: { paymentId: body.paymentId } });
      expect(row.status).toBe('UNKNOWN');
      expect(row.providerResponse).toEqual({ error: 'provider_timeout' });
      expect(await storedShares(row.id)).toEqual([3333n, 3333n, 3334n]);
      expect(sentInit(body.paymentId)).toHaveLength(1);
    });

    it('a provider 500: UNKNOWN', async () => {
      hosts.link.state.injectFault({ path: '/api/agent/link/init', status: 500, rawBody: '<html>oops</html>', contentType: 'text/html' });
      const res = await admin.createInit(initBody());
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('UNKNOWN');
      expect(res.body.failureReason).toMatch(/HTTP 500/);
    });
  });

  describe('fiat', () => {
    it('POST {link_base_url}/api/agent/link/fiat-distribution with the {data} envelope; 201 ACCEPTED', async () => {
      const before = fiatRequests().length;
      const res = await admin.createFiat(fiatBody());
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        kind: 'fiat',
        status: 'ACCEPTED',
        payer: 'Awa Ndiaye',
        paymentId: null,
        paymentReceiver: null,
        amount: '250.75',
        currency: 'EUR',
        distribution: [
          { position: 1, matricule: m[1], rate: '60', share: '150.45' },
          { position: 2, matricule: m[2], rate: '40', share: '100.30' },
        ],
        remainder: '0.00',
        providerMessage: 'Distribution completed successfully',
      });
      expect(fiatRequests()).toHaveLength(before + 1);
      const sent = fiatRequests().at(-1)!;
      expect(sent.body).toEqual({
        data: {
          payer: 'Awa Ndiaye',
          currency: 'EUR',
          amount: 250.75,
          distribution: [
            { matricule: m[1], rate: 60 },
            { matricule: m[2], rate: 40 },
          ],
        },
      });
      expect(sent.headers).toMatchObject({ authorization: `Bearer ${hosts.bearer()}`, 'x-api-key': LINK_API_KEY });
      const row = await hosts.service.prisma.distribution.findUniqueOrThrow({ where: { id: res.body.id } });
      expect(row).toMatchObject({ kind: 'fiat', payer: 'Awa Ndiaye', paymentId: null, receiverShareMinor: null });
      expect(await storedShares(res.body.id)).toEqual([15045n, 10030n]);
    });

    it('what the rates leave stays unallocated (remainder)', async () => {
      const res = await admin.createFiat(fiatBody({ currency: 'XAF', amount: 1001, distribution: [{ matricule: m[0], rate: '12.5' }] }));
      expect(res.body.distribution[0].share).toBe('125');
      expect(res.body.remainder).toBe('876');
    });
  });

  describe('validation: 400 by field, nothing stored, no provider call', () => {
    const entries = (...list: [number, unknown][]) => list.map(([i, rate]) => ({ matricule: `MAT_V${i}`, rate }));
    it.each([
      ['rate 0', { distribution: entries([0, 0]) }, 'distribution[0].rate'],
      ['a negative rate', { distribution: entries([0, -5]) }, 'distribution[0].rate'],
      ['a rate with more than 2 decimals', { distribution: entries([0, '10'], [1, '33.333']) }, 'distribution[1].rate'],
      ['a rate above 100', { distribution: entries([0, 100.5]) }, 'distribution[0].rate'],
      ['a rate that is not a number', { distribution: entries([0, 'ten']) }, 'distribution[0].rate'],
      [
        'a duplicate matricule',
        {
          distribution: [
            { matricule: 'MAT_A', rate: 10 },
            { matricule: 'MAT_A', rate: 20 },
          ],
        },
        'distribution[1].matricule',
      ],
      ['rates summing to 100.01', { distribution: entries([0, '50'], [1, '50.01']) }, 'distribution'],
      ['an empty list', { distribution: [] }, 'distribution'],
      ['no list', { distribution: undefined }, 'distribution'],
      ['a missing matricule', { distribution: [{ rate: 10 }] }, 'distribution[0].matricule'],
      ['an XAF amount with decimals', { amount: '100.5' }, 'amount'],
      ['a zero amount', { amount: 0 }, 'amount'],
      ['a negative amount', { amount: '-10' }, 'amount'],
      ['a EUR amount with 3 decimals', { amount: '10.005', currency: 'EUR' }, 'amount'],
      ['a currency not accepted', { currency: 'GBP' }, 'currency'],
      ['a lower-case currency', { currency: 'xaf' }, 'currency'],
      ['no paymentId', { paymentId: undefined }, 'paymentId'],
      ['a paymentId with spaces', { paymentId: 'pay 1' }, 'paymentId'],
      ['no paymentReceiver', { paymentReceiver: '' }, 'paymentReceiver'],
    ])('init: %s', async (_name, overrides, field) => {
      const calls = providerCalls();
      const stored = await hosts.service.prisma.distribution.count();
      const res = await admin.createInit(initBody(overrides));
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ code: 'validation_failed' });
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(providerCalls()).toBe(calls);
      expect(await hosts.service.prisma.distribution.count()).toBe(stored);
    });

    it.each([
      ['no payer', { payer: undefined }, 'payer'],
      ['a rate above 100', { distribution: [{ matricule: 'MAT_F1', rate: '100.01' }] }, 'distribution[0].rate'],
      [
        'rates summing to 100.01',
        {
          distribution: [
            { matricule: 'MAT_F1', rate: 0.01 },
            { matricule: 'MAT_F2', rate: 100 },
          ],
        },
        'distribution',
      ],
      ['an empty list', { distribution: [] }, 'distribution'],
      ['an XAF amount with decimals', { currency: 'XAF', amount: 10.5 }, 'amount'],
      [
        'a duplicate matricule',
        {
          distribution: [
            { matricule: 'MAT_B', rate: 1 },
            { matricule: 'MAT_C', rate: 1 },
            { matricule: 'MAT_B', rate: 1 },
          ],
        },
        'distribution[2].matricule',
      ],
    ])('fiat: %s', async (_name, overrides, field) => {
      const calls = providerCalls();
      const res = await admin.createFiat(fiatBody(overrides));
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(providerCalls()).toBe(calls);
    });

    it('reports every field at once, and a refused request frees its Idempotency-Key', async () => {
      const key = randomUUID();
      const bad = await admin.createInit(
        initBody({
          amount: '1.5',
          distribution: [
            { matricule: 'MAT_D', rate: 60 },
            { matricule: 'MAT_D', rate: 50 },
          ],
        }),
        key,
      );
      expect(bad.status).toBe(400);
      expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
        'amount',
        'distribution',
        'distribution[1].matricule',
      ]);
      const good = await admin.createInit(initBody(), key);
      expect(good.status).toBe(201);
    });
  });

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
      hosts.link.state.injectFault({ path: '/api/agent/link/init', delayMs: 1500 });
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
