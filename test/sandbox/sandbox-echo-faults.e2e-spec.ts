import { startSandbox, type RunningSandbox } from '../../src/sandbox/sandbox.server';

/** The sandbox's `echo` and `transactionsEnvelope` faults: a provider that repeats what it was sent. */
describe('sandbox echo and envelope faults', () => {
  let sandbox: RunningSandbox;
  let bearer: string;
  const call = async (method: string, path: string, init: { headers?: Record<string, string>; body?: unknown } = {}) => {
    const res = await fetch(`${sandbox.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const card = (extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${bearer}`,
    'x-sp-auth-token': 'sandbox-sp-auth-token',
    ...extra,
  });

  beforeAll(async () => {
    sandbox = await startSandbox({ callbackDelayMs: 20 });
    bearer = (
      await call('POST', '/api/action/auth', {
        body: { public_apikey: 'sandbox-public-apikey', private_secretkey: 'sandbox-private-secretkey' },
      })
    ).body.token;
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('token endpoint: 401 {error, message} echoing the secret and the key', async () => {
    sandbox.state.injectFault({ path: '/api/action/auth', echo: true });
    const res = await call('POST', '/api/action/auth', {
      body: { public_apikey: 'sandbox-public-apikey', private_secretkey: 'sandbox-private-secretkey' },
    });
    expect(res).toEqual({
      status: 401,
      body: { error: 401, message: 'invalid private_secretkey sandbox-private-secretkey for public_apikey sandbox-public-apikey' },
    });
  });

  it('wallet link: 400 {code, success:false, message} echoing the api key and the bearer', async () => {
    sandbox.state.injectFault({ path: '/api/agent/link/new', echo: true });
    const res = await call('GET', '/api/agent/link/new?email=a@b.co&phone=650000001&phoneCountry=%2B237', {
      headers: { authorization: `Bearer ${bearer}`, 'x-api-key': 'sandbox-public-apikey' },
    });
    expect(res).toEqual({
      status: 400,
      body: { code: '400', success: false, message: `invalid x-api-key sandbox-public-apikey with bearer ${bearer}` },
    });
  });

  it('pay-in: the callback URLs are echoed with their tokens', async () => {
    sandbox.state.injectFault({ path: '/api/agent/bills/v3', echo: true, status: 422 });
    const res = await call('POST', '/api/agent/bills/v3', {
      headers: { authorization: `Bearer ${bearer}`, 'x-api-key': 'k' },
      body: { successUrl: 'http://x/s?token=S1', failureUrl: 'http://x/f?token=F1' },
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      success: false,
      message: `invalid x-api-key k with bearer ${bearer}; successUrl http://x/s?token=S1 failureUrl http://x/f?token=F1`,
    });
  });

  it("card operation: 400 'card <PAN> cvv <CVV> declined' with the card's own number and CVV", async () => {
    const user = (
      await call('POST', '/api/action/card/user', {
        headers: card(),
        body: { first_name: 'A', last_name: 'B', email: 'a@b.co', country_code: 'CM', contact: '650000001', dob: '1990-01-01' },
      })
    ).body;
    const created = (await call('POST', `/api/action/card/${user.user_id}`, { headers: card(), body: { balance: '100', currency: 'XAF' } }))
      .body;
    sandbox.state.injectFault({ path: `/api/action/card/transaction/${created.card_id}`, echo: true });
    const res = await call('GET', `/api/action/card/transaction/${created.card_id}?operation=topup&amount=1&currency=XAF`, {
      headers: card(),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(400);
    expect(res.body.message).toMatch(
      new RegExp(`^card ${created.card_number} cvv ${created.cvv} declined \\(x-sp-auth-token sandbox-sp-auth-token, bearer ${bearer}\\)$`),
    );
  });

  it.each([
    ['', (list: unknown) => list],
    ['data', (list: unknown) => ({ data: list })],
    ['data.transactions', (list: unknown) => ({ data: { transactions: list } })],
    ['items.data', (list: unknown) => ({ items: { data: list } })],
  ] as const)('transactionsEnvelope %p wraps the listing', async (envelope, wrap) => {
    const user = (
      await call('POST', '/api/action/card/user', {
        headers: card(),
        body: { first_name: 'A', last_name: 'B', email: 'a@b.co', country_code: 'CM', contact: '650000001', dob: '1990-01-01' },
      })
    ).body;
    const created = (await call('POST', `/api/action/card/${user.user_id}`, { headers: card(), body: { balance: '100', currency: 'XAF' } }))
      .body;
    await call('GET', `/api/action/card/transaction/${created.card_id}?operation=topup&amount=5&currency=XAF`, { headers: card() });
    const plain = await call('GET', `/api/action/card/transaction/${created.card_id}?operation=transactions`, { headers: card() });
    expect(plain.body.transactions).toHaveLength(1);
    sandbox.state.injectFault({ path: `/api/action/card/transaction/${created.card_id}`, transactionsEnvelope: envelope });
    const wrapped = await call('GET', `/api/action/card/transaction/${created.card_id}?operation=transactions`, { headers: card() });
    expect(wrapped).toEqual({ status: 200, body: wrap(plain.body.transactions) });
  });

  it('echoDelivered: the normal answer, whose message repeats the secrets it delivers', async () => {
    sandbox.state.injectFault({ path: '/api/action/auth', echoDelivered: true });
    const token = await call('POST', '/api/action/auth', {
      body: { public_apikey: 'sandbox-public-apikey', private_secretkey: 'sandbox-private-secretkey' },
    });
    expect(token.status).toBe(200);
    expect(token.body.message).toBe(`token ${token.body.token} issued`);
    expect(sandbox.state.tokens.has(token.body.token)).toBe(true);

    sandbox.state.injectFault({ path: '/api/agent/link/new', echoDelivered: true });
    const link = await call('GET', '/api/agent/link/new?email=echo.delivered@b.co&phone=650000009&phoneCountry=%2B237', {
      headers: { authorization: `Bearer ${bearer}`, 'x-api-key': 'sandbox-public-apikey' },
    });
    expect(link.status).toBe(200);
    expect(link.body.message).toMatch(new RegExp(`; wallet linked with apikey ${link.body.data.apikey}$`));

    const user = await call('POST', '/api/action/card/user', {
      headers: card(),
      body: { first_name: 'A', last_name: 'B', email: 'a@b.co', country_code: 'CM', contact: '650000001', dob: '1990-01-01' },
    });
    sandbox.state.injectFault({ path: `/api/action/card/${user.body.user_id}`, method: 'POST', echoDelivered: true });
    const created = await call('POST', `/api/action/card/${user.body.user_id}`, {
      headers: card(),
      body: { balance: '10', currency: 'XAF' },
    });
    expect(created.status).toBe(200);
    expect(created.body.message).toBe(`card ${created.body.card_number} issued with code ${created.body.cvv}`);
  });

  it('refuses an unknown envelope', () => {
    expect(() => sandbox.state.injectFault({ path: '/x', transactionsEnvelope: 'data.data.data' as never })).toThrow(
      /transactionsEnvelope/,
    );
  });
});
