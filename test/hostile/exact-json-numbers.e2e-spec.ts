import { randomUUID } from 'node:crypto';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { orderRequest } from '../support/provider-factories';
import type { LinkHosts } from '../wallet-links/link-hosts';
import { inject, problemShapeFailure, seedCustomer, startHostileHosts, type InjectedAnswer } from './hostile-harness';

/**
 * Amounts sent as JSON numbers are read from their text: a number whose text is not exactly the
 * value JSON.parse makes of it (1500.0000000000001 is the double 1500) is refused like the same
 * text sent as a string, field by field, with nothing stored and nothing sent to the provider.
 */
describe('hostile: JSON numbers are never silently rounded', () => {
  let hosts: LinkHosts;
  let token: string;
  let admin: string;
  let matricules: string[];
  let cardId: string;

  const providerCalls = () => hosts.base.state.requests.length + hosts.link.state.requests.length;
  const count = async (table: string) =>
    Number((await hosts.service.prisma.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM ${table}`))[0].n);

  /** Posts the exact JSON text given; checks that a refusal stored nothing and sent nothing. */
  async function post(url: string, text: string, who = token): Promise<InjectedAnswer> {
    const calls = providerCalls();
    const before = await Promise.all(['orders', 'distributions', 'card_operations'].map(count));
    const answer = await inject(hosts.service, { method: 'POST', url, token: who, key: randomUUID(), payload: text });
    if (answer.status >= 400) {
      expect(problemShapeFailure(answer)).toBeUndefined();
      expect(providerCalls()).toBe(calls);
      expect(await Promise.all(['orders', 'distributions', 'card_operations'].map(count))).toEqual(before);
    }
    return answer;
  }

  /** An order body whose amount is written as the raw JSON text `amount`. */
  const orderText = (amount: string, overrides: Record<string, unknown> = {}) =>
    JSON.stringify(orderRequest({ wallet: TEST_WALLETS.NO_CALLBACK, amount: '@', ...overrides })).replace('"@"', () => amount);

  beforeAll(async () => {
    hosts = await startHostileHosts();
    const seeded = await seedCustomer(hosts, { phones: ['650500001', '650500002'], cards: 1, balance: '5000' });
    token = seeded.token;
    matricules = seeded.matricules;
    [cardId] = seeded.cardIds;
    admin = await hosts.service.bearer(`adm_${randomUUID().slice(0, 6)}`, 'admin');
  }, 60_000);
  afterAll(async () => {
    await hosts?.close();
  });

  it('refuses 1500.0000000000001 XAF as a number, as it does as a string', async () => {
    for (const amount of ['1500.0000000000001', '"1500.0000000000001"']) {
      const answer = await post('/v1/orders', orderText(amount));
      expect([amount, answer.status, answer.body.errors]).toEqual([amount, 400, [{ field: 'amount', message: 'XAF allows no decimals' }]]);
    }
  });

  it('refuses 12.500000000000001 EUR for its decimals', async () => {
    const answer = await post('/v1/orders', orderText('12.500000000000001', { currency: 'EUR' }));
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([{ field: 'amount', message: 'EUR allows at most 2 decimals' }]);
  });

  it('accepts a number whose text is exact, however it is written, and stores its exact value', async () => {
    for (const amount of ['1500.0', '1.5e3']) {
      const answer = await post('/v1/orders', orderText(amount));
      expect([amount, answer.status, answer.body.amount]).toEqual([amount, 201, '1500']);
    }
  });

  it('answers a type error for an integer field whose number is not the one written', async () => {
    const text = JSON.stringify(orderRequest({ wallet: TEST_WALLETS.NO_CALLBACK, service: '@' })).replace('"@"', '12345678901234567891');
    const answer = await post('/v1/orders', text);
    expect(answer.status).toBe(400);
    expect(new Set(answer.body.errors.map((e: { field: string }) => e.field))).toEqual(new Set(['service']));
    expect(answer.body.errors).toContainEqual({ field: 'service', message: 'service must be an integer number' });
  });

  it('refuses a card top-up of 10.0000000000000001 XAF', async () => {
    const answer = await post(`/v1/cards/${cardId}/topup`, '{"amount":10.0000000000000001}');
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([{ field: 'amount', message: 'XAF allows no decimals' }]);
  });

  it('refuses a distribution rate of 50.000000000000001 beside 50 for its decimals, instead of reading 50', async () => {
    const text = JSON.stringify({
      payer: 'Awa Ndiaye',
      amount: '10000',
      currency: 'XAF',
      distribution: [
        { matricule: matricules[0], rate: '@' },
        { matricule: matricules[1], rate: 50 },
      ],
    }).replace('"@"', '50.000000000000001');
    const answer = await post('/v1/distributions/fiat', text, admin);
    expect(answer.status).toBe(400);
    expect(answer.body.errors.map((e: { field: string }) => e.field)).toEqual(['distribution[0].rate']);
  });
});
