import { randomUUID } from 'node:crypto';
import { LINK_API_KEY, type LinkHosts } from '../wallet-links/link-hosts';
import { type Api, useDistributionHosts } from './distributions-harness';

describe('distributions end to end', () => {
  const context = useDistributionHosts();
  const { fiatRequests, providerCalls, initBody, fiatBody, storedShares } = context;
  let hosts: LinkHosts;
  let admin: Api;
  let m: [string, string, string];
  beforeAll(() => ({ hosts, admin, m } = context));

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
});
