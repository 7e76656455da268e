import type { AxiosInstance, AxiosResponse } from 'axios';
import { isLuhnValid } from '../../src/sandbox/sandbox.money';
import { RAW_JSON, http, tokenFor, useSandbox } from './sandbox-harness';

describe('provider sandbox (HTTP)', () => {
  const context = useSandbox();
  const { extra, cardHeaders } = context;
  let api: AxiosInstance;
  beforeAll(() => ({ api } = context));

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
});
