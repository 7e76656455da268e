import { CardsClient } from '../../src/provider/clients/cards.client';
import { DistributionClient } from '../../src/provider/clients/distribution.client';
import { PayinClient } from '../../src/provider/clients/payin.client';
import { WalletLinkClient } from '../../src/provider/clients/wallet-link.client';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardUserBody, payinBody, uniqueEmail } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { ProviderCallLog } from '../../src/provider/provider-call-log';

/**
 * Every provider endpoint is called with the exact path, method, headers and body of
 * provider-api.md, as the sandbox recorded them on the wire.
 */
describe('provider clients on the wire', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  const bearerOf = () => [...sandbox.state.tokens.keys()].at(-1);

  beforeAll(async () => {
    sandbox = await startTestSandbox({ cardOperationParam: 'action', cardAmountParam: 'value', cardCurrencyParam: 'devise' });
    service = await startTestService(sandbox, {
      CARD_OPERATION_PARAM: 'action',
      CARD_AMOUNT_PARAM: 'value',
      CARD_CURRENCY_PARAM: 'devise',
    });
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  const lastRequest = (method: string, path: string) => {
    const found = sandbox.state.requests.filter((r) => r.method === method && r.path === path);
    expect(found.length).toBeGreaterThan(0);
    return found[found.length - 1];
  };

  it('gets a token with the API key and secret, without a bearer', async () => {
    await service.get(PayinClient).collect(payinBody(), { service: 1 });
    const auth = lastRequest('POST', '/api/action/auth');
    expect(auth.body).toEqual({ public_apikey: 'sandbox-public-apikey', private_secretkey: 'sandbox-private-secretkey' });
    expect(auth.headers['content-type']).toMatch(/^application\/json/);
    expect(auth.headers.authorization).toBeUndefined();
  });

  it('pay-in: POST {base_url}/api/agent/bills/v3 with bearer, x-api-key, operation 2, service, otp and the documented body', async () => {
    const body = payinBody({ amount: 2500.5, currency: 'EUR' });
    const envelope = await service.get(PayinClient).collect(body, { service: 17, otp: '012345' });
    expect(envelope).toMatchObject({ success: true, code: 200, status: 'PROCESSING', data: { external_reference: body.order_id } });
    const sent = lastRequest('POST', '/api/agent/bills/v3');
    expect(sent.body).toEqual(body);
    expect(Object.keys(sent.body as object).sort()).toEqual(
      ['amount', 'currency', 'description', 'failureUrl', 'order_id', 'payer', 'payerEmail', 'successUrl', 'wallet'].sort(),
    );
    expect(typeof (sent.body as { amount: unknown }).amount).toBe('number');
    expect(sent.headers).toMatchObject({
      authorization: `Bearer ${bearerOf()}`,
      'x-api-key': 'sandbox-public-apikey',
      operation: '2',
      service: '17',
      otp: '012345',
      'content-type': expect.stringMatching(/^application\/json/),
    });
    expect(sent.headers['x-sp-auth-token']).toBeUndefined();
  });

  it('pay-in without otp sends no otp header', async () => {
    await service.get(PayinClient).collect(payinBody(), { service: 3 });
    expect(lastRequest('POST', '/api/agent/bills/v3').headers.otp).toBeUndefined();
  });

  it('card users, cards and every card operation: exact paths, x-sp-auth-token, configured parameter names', async () => {
    const cards = service.get(CardsClient);
    const userBody = cardUserBody();
    const user = await cards.createUser(userBody);
    const createUser = lastRequest('POST', '/api/action/card/user');
    expect(createUser.body).toEqual(userBody);
    expect(createUser.body).toHaveProperty('billing_adress', '12 rue de la Joie');
    expect(createUser.headers).toMatchObject({ authorization: `Bearer ${bearerOf()}`, 'x-sp-auth-token': 'sandbox-sp-auth-token' });
    expect(createUser.headers['x-api-key']).toBeUndefined();

    const read = await cards.getUser(user.reference);
    expect(read.user_id).toBe(user.user_id);
    expect(lastRequest('GET', `/api/action/card/user/${user.reference}`).headers['x-sp-auth-token']).toBe('sandbox-sp-auth-token');

    const card = await cards.createCard(user.user_id, { balance: '100.00', currency: 'EUR' });
    expect(lastRequest('POST', `/api/action/card/${user.user_id}`).body).toEqual({ balance: '100.00', currency: 'EUR' });
    expect(card.card_number).toMatch(/^\d{16}$/);

    const details = await cards.getCard(card.card_id);
    expect(details).toMatchObject({ card_id: card.card_id, balance: '100.00', currency: 'EUR' });
    expect(lastRequest('GET', `/api/action/card/${card.card_id}`).method).toBe('GET');

    const opPath = `/api/action/card/transaction/${card.card_id}`;
    const topup = await cards.topUp(card.card_id, '10.50', 'EUR');
    expect(topup.new_balance).toBe('110.50');
    expect(lastRequest('GET', opPath).query).toEqual({ action: 'topup', value: '10.50', devise: 'EUR' });
    const withdraw = await cards.withdraw(card.card_id, '0.50', 'EUR');
    expect(withdraw.new_balance).toBe('110.00');
    expect(lastRequest('GET', opPath).query).toEqual({ action: 'withdraw', value: '0.50', devise: 'EUR' });

    await cards.disable(card.card_id);
    expect(lastRequest('GET', opPath).query).toEqual({ action: 'disabled' });
    await cards.enable(card.card_id);
    expect(lastRequest('GET', opPath).query).toEqual({ action: 'enabled' });
    await cards.transactions(card.card_id);
    expect(lastRequest('GET', opPath).query).toEqual({ action: 'transactions' });
    await cards.terminate(card.card_id);
    const terminate = lastRequest('GET', opPath);
    expect(terminate.query).toEqual({ action: 'terminate' });
    expect(terminate.headers).toMatchObject({ authorization: `Bearer ${bearerOf()}`, 'x-sp-auth-token': 'sandbox-sp-auth-token' });
  });

  it('wallet link, init and fiat distribution: {link_base_url}, bearer and x-api-key, documented query and bodies', async () => {
    const links = service.get(WalletLinkClient);
    const email = uniqueEmail('link');
    const link = await links.linkUser({ email, phone: '650000001', phoneCountry: '+237' });
    expect(link.matricule).toBeTruthy();
    const linkRequest = lastRequest('GET', '/api/agent/link/new');
    expect(linkRequest.query).toEqual({ email, phone: '650000001', phoneCountry: '+237' });
    expect(linkRequest.headers).toMatchObject({
      authorization: `Bearer ${bearerOf()}`,
      'x-api-key': 'sandbox-public-apikey',
      'content-type': 'application/json',
    });

    const second = await links.linkUser({ email: uniqueEmail('link'), phone: '650000002', phoneCountry: '+237' });
    const distribution = [
      { matricule: link.matricule, rate: 60 },
      { matricule: second.matricule, rate: 40 },
    ];
    const distributions = service.get(DistributionClient);
    const initBody = { payment_receiver: link.matricule, payment_id: `pay_${Date.now()}`, amount: 10000, distribution };
    await expect(distributions.initTransaction(initBody)).resolves.toMatchObject({ success: true });
    const init = lastRequest('POST', '/api/agent/link/init');
    expect(init.body).toEqual(initBody);
    expect(init.headers).toMatchObject({ authorization: `Bearer ${bearerOf()}`, 'x-api-key': 'sandbox-public-apikey' });

    const fiatBody = { data: { payer: 'Awa Ndiaye', currency: 'XAF', amount: 5000, distribution } };
    await expect(distributions.distributeFiat(fiatBody)).resolves.toMatchObject({ success: true });
    const fiat = lastRequest('POST', '/api/agent/link/fiat-distribution');
    expect(fiat.body).toEqual(fiatBody);
    expect(fiat.headers).toMatchObject({ 'x-api-key': 'sandbox-public-apikey' });
  });

  it('uses {link_base_url} for link routes and {base_url} for the others', async () => {
    const linkSandbox = await startTestSandbox();
    const split = await startTestService(sandbox, { PROVIDER_LINK_BASE_URL: linkSandbox.url });
    try {
      // One provider, two hosts: a token issued by {base_url} is valid on {link_base_url}.
      await split.get(PayinClient).collect(payinBody(), { service: 1 });
      for (const [token, expiresAt] of sandbox.state.tokens) linkSandbox.state.tokens.set(token, expiresAt);
      const before = sandbox.state.requests.filter((r) => r.path === '/api/agent/link/new').length;
      await split.get(WalletLinkClient).linkUser({ email: uniqueEmail('split'), phone: '650000003', phoneCountry: '+237' });
      expect(linkSandbox.state.requests.filter((r) => r.path === '/api/agent/link/new')).toHaveLength(1);
      expect(sandbox.state.requests.filter((r) => r.path === '/api/agent/link/new')).toHaveLength(before);
    } finally {
      await split.close();
      await linkSandbox.close();
    }
  });

  it('records every call in the provider call log, redacted', async () => {
    await service.get(ProviderCallLog).flush();
    const rows = await service.prisma.providerCall.findMany({
      where: { endpoint: { in: ['auth.token', 'cards.card.create', 'link.new'] } },
    });
    expect(rows.length).toBeGreaterThanOrEqual(3);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain('sandbox-private-secretkey');
    for (const token of sandbox.state.tokens.keys()) expect(stored).not.toContain(token);
    const cardCreate = rows.find((r) => r.endpoint === 'cards.card.create' && r.outcome === 'answered');
    expect(JSON.stringify(cardCreate?.responseBody)).toMatch(/\*\*\*\* \*\*\*\* \*\*\*\* \d{4}/);
    expect((cardCreate?.responseBody as Record<string, unknown>).cvv).toBe('[REDACTED]');
    expect(rows.every((r) => r.durationMs >= 0 && r.outcome)).toBe(true);
  });
});
