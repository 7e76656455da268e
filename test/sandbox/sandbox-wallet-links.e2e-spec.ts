import type { AxiosInstance } from 'axios';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { useSandbox } from './sandbox-harness';

describe('provider sandbox (HTTP)', () => {
  const context = useSandbox();
  const { agentHeaders } = context;
  let sandbox: RunningSandbox;
  let api: AxiosInstance;
  beforeAll(() => ({ sandbox, api } = context));

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
});
