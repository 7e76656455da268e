import { LINK_API_KEY, type LinkHosts } from '../wallet-links/link-hosts';
import { type Api, PROVIDER_TIMEOUT_MS, useDistributionHosts } from './distributions-harness';

describe('distributions end to end', () => {
  const context = useDistributionHosts();
  const { sentInit, initBody, storedShares } = context;
  let hosts: LinkHosts;
  let admin: Api;
  let m: [string, string, string];
  beforeAll(() => ({ hosts, admin, m } = context));

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
      hosts.link.state.injectFault({ path: '/api/agent/link/init', delayMs: PROVIDER_TIMEOUT_MS + 1_000 });
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
});
