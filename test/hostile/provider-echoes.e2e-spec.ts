import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { cardsClient, userWithCard } from '../support/cards-factories';
import { orderRequest, uniqueEmail } from '../support/provider-factories';
import { databaseDump } from '../support/database-dump';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { tokenWithEmail } from '../wallet-links/link-hosts';

/**
 * A hostile provider echoes what it was sent, and more: every configured secret, its bearer
 * tokens, a card's number and CVV, our callback URLs with their tokens. None of it may reach an
 * HTTP answer, a log line or any stored row (a full dump of the database).
 */
describe('provider echoes never reach answers, logs or the database', () => {
  const API_KEY = `echo-apikey-${randomBytes(6).toString('hex')}`;
  const SECRET_KEY = `echo-secret-${randomBytes(6).toString('hex')}`;
  const SP_TOKEN = `echo-sp-token-${randomBytes(6).toString('hex')}`;
  const CALLBACK_SECRET = `echo-callback-secret-${randomBytes(12).toString('hex')}`;
  const ENCRYPTION_KEY = randomBytes(32).toString('base64');
  const JWT_SECRET = `echo-jwt-secret-${randomBytes(16).toString('hex')}`;

  let sandbox: RunningSandbox;
  let service: TestService;
  /** Every HTTP answer of the test: status, headers and body text. */
  const answers: string[] = [];
  const cardNumbers: string[] = [];
  const cvvs: string[] = [];

  const keep = <T extends { status: number; headers: Record<string, unknown>; text: string }>(res: T): T => {
    answers.push(JSON.stringify({ status: res.status, headers: res.headers, text: res.text }));
    return res;
  };
  /** Checks on the answers met along the way, run by their own test (so that every other check runs too). */
  const deferred: (() => void)[] = [];
  const deferExpect = (check: () => void) => deferred.push(check);
  const echoOnce = (path: string, extra: Record<string, unknown> = {}) => sandbox.state.injectFault({ path, echo: true, ...extra });

  /** What no answer, log line or row may hold. */
  function secrets(): string[] {
    const bearers = sandbox.state.requests
      .map((r) => /^Bearer\s+(\S+)/.exec(String(r.headers.authorization ?? ''))?.[1])
      .filter((t): t is string => Boolean(t));
    return [
      API_KEY,
      SECRET_KEY,
      SP_TOKEN,
      CALLBACK_SECRET,
      ENCRYPTION_KEY,
      JWT_SECRET,
      ...sandbox.state.tokens.keys(),
      ...bearers,
      ...cardNumbers,
    ];
  }

  /** Tokens of the callback URLs the service sent with its pay-ins. */
  function callbackTokens(): string[] {
    return sandbox.state
      .requestsTo('/api/agent/bills/v3')
      .flatMap((r) => [(r.body as Record<string, string>).successUrl, (r.body as Record<string, string>).failureUrl])
      .filter((url): url is string => typeof url === 'string')
      .map((url) => new URL(url).searchParams.get('token') ?? '');
  }

  /** Echo texts of a CVV: the sandbox writes `cvv <digits>`; a JSON member would be `"cvv":"<digits>"`. */
  const cvvShapes = (cvv: string) => [`cvv ${cvv}`, `"cvv":"${cvv}"`, `"cvv": "${cvv}"`];

  beforeAll(async () => {
    sandbox = await startTestSandbox({ apiKey: API_KEY, secretKey: SECRET_KEY, spAuthToken: SP_TOKEN });
    service = await startTestService(sandbox, {
      PROVIDER_API_KEY: API_KEY,
      PROVIDER_SECRET_KEY: SECRET_KEY,
      PROVIDER_SP_AUTH_TOKEN: SP_TOKEN,
      CALLBACK_SIGNING_SECRET: CALLBACK_SECRET,
      DATA_ENCRYPTION_KEY: ENCRYPTION_KEY,
      AUTH_JWT_SECRET: JWT_SECRET,
      LOG_LEVEL: 'trace',
    });
    const alice = await cardsClient(service);
    const http = () => request(service.server);
    const order = (key = randomUUID(), overrides: Record<string, unknown> = {}) =>
      http().post('/v1/orders').auth(alice.token, { type: 'bearer' }).set('Idempotency-Key', key).send(orderRequest(overrides));

    // 1. The token endpoint answers 401 echoing the secret key and the API key: a customer's order
    //    gets a generic 502 with a stable code, and the order is not left UNKNOWN.
    echoOnce('/api/action/auth');
    const tokenFailure = keep(await order());
    deferExpect(() => expect(tokenFailure.status).toBe(502));
    deferExpect(() => expect(tokenFailure.body).toMatchObject({ code: 'provider_authentication_failed', outcomeKnown: true }));
    deferExpect(() => expect(tokenFailure.body.providerMessage).toBeUndefined());
    // The provider's words do reach the operators, scrubbed.
    deferExpect(() => expect(service.logs.text).toContain(`invalid private_secretkey [REDACTED] for public_apikey [REDACTED]`));

    // 2. A pay-in refused with an echo of the API key, the bearer and our callback URLs (tokens
    //    included); then an accepted pay-in whose callback URLs are stored nowhere with their token.
    echoOnce('/api/agent/bills/v3');
    const payinKey = randomUUID();
    const refused = keep(await order(payinKey));
    deferExpect(() => expect(refused.body).toMatchObject({ status: 'FAILED' }));
    deferExpect(() =>
      expect(refused.body.failureReason).toMatch(
        /^invalid x-api-key \[REDACTED\] with bearer \[REDACTED\]; successUrl http.*token=\[REDACTED\]/,
      ),
    );
    keep(await order(payinKey)); // the idempotent replay
    const accepted = keep(await order(randomUUID(), { wallet: TEST_WALLETS.NO_CALLBACK }));
    deferExpect(() => expect(accepted.status).toBe(201));
    // A pay-in whose connection breaks after it was sent: the error (and its cause) gets logged.
    sandbox.state.injectFault({ path: '/api/agent/bills/v3', dropConnection: true });
    keep(await order());
    sandbox.state.injectFault({ path: '/api/agent/bills/v3', status: 503, body: { success: false, message: 'down', echo: `${API_KEY}` } });
    keep(await order());
    // The provider echoes secrets it never saw too (a debugging provider, a proxy page).
    sandbox.state.injectFault({
      path: '/api/agent/bills/v3',
      status: 400,
      body: { success: false, message: `keys ${CALLBACK_SECRET} ${ENCRYPTION_KEY} ${JWT_SECRET}` },
    });
    const unseenSecrets = keep(await order());
    deferExpect(() =>
      expect(unseenSecrets.body).toMatchObject({ status: 'FAILED', failureReason: 'keys [REDACTED] [REDACTED] [REDACTED]' }),
    );

    // 3. A wallet link refused with an echo of the API key and the bearer.
    echoOnce('/api/agent/link/new');
    // A customer links only its own verified email (the token's `email` claim).
    const linkEmail = uniqueEmail('echo');
    const linkToken = await tokenWithEmail(service, alice.sub, [], linkEmail, true);
    const link = keep(
      await http()
        .post('/v1/wallet-links')
        .auth(linkToken, { type: 'bearer' })
        .send({ email: linkEmail, phone: '650000001', phoneCountry: '+237' }),
    );
    deferExpect(() => expect(link.status).toBe(422));
    deferExpect(() => expect(link.body).toMatchObject({ code: 'provider_link_rejected' }));

    // 4. Card operations refused with `card <PAN> cvv <CVV> declined`, their idempotent replays, a
    //    read failing with the same echo in a 500, and a card creation refused the same way.
    const { cardUser, card } = await userWithCard(alice);
    cardNumbers.push(card.cardNumber);
    cvvs.push(card.cvv);
    const topUpKey = randomUUID();
    echoOnce(`/api/action/card/transaction/${card.providerCardId}`);
    const topUp = keep(await alice.topUp(card.id, '1000', topUpKey));
    deferExpect(() => expect(topUp.status).toBe(422));
    // The provider's text keeps no run of three digits or more (not even a card's last four).
    deferExpect(() => expect(topUp.body.providerMessage).toMatch(/^card \[REDACTED\] cvv \[REDACTED\] declined/));
    const replayed = keep(await alice.topUp(card.id, '1000', topUpKey));
    deferExpect(() => expect(replayed.headers['idempotent-replayed']).toBe('true'));
    echoOnce(`/api/action/card/transaction/${card.providerCardId}`, { status: 500 });
    const unknown = keep(await alice.withdraw(card.id, '10'));
    deferExpect(() => expect(unknown.status).toBe(502));
    echoOnce(`/api/action/card/transaction/${card.providerCardId}`);
    keep(await alice.freeze(card.id));
    echoOnce(`/api/action/card/transaction/${card.providerCardId}`);
    keep(await alice.transactions(card.id));
    echoOnce(`/api/action/card/${card.providerCardId}`, { method: 'GET', status: 500 });
    keep(await alice.getCard(card.id));
    echoOnce(`/api/action/card/${cardUser.providerUserId}`, { method: 'POST' });
    const creation = keep(await alice.createCard(cardUser.id));
    deferExpect(() => expect(creation.status).toBe(422));
    echoOnce('/api/action/card/user', { method: 'POST' });
    const userCreation = keep(await alice.createCardUser());
    deferExpect(() => expect(userCreation.status).toBe(422));

    // 5. A provider-wide token revocation, then a 401 echoing the bearer.
    sandbox.state.revokeTokens();
    sandbox.state.injectFault({ path: `/api/action/card/${card.providerCardId}`, method: 'GET', status: 401, times: 2, echo: true });
    keep(await alice.getCard(card.id));

    // Every number and CVV the echoes used.
    for (const issued of sandbox.state.cards.values()) {
      cardNumbers.push(issued.card_number);
      cvvs.push(issued.cvv);
    }
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  it('each echo was answered as a first-class API would: a stable code, the scrubbed provider words', () => {
    expect(deferred.length).toBeGreaterThanOrEqual(16);
    for (const check of deferred) check();
  });

  it('the provider did echo them (so the checks below can fail)', () => {
    const echoed = sandbox.state.requests.length;
    expect(echoed).toBeGreaterThan(10);
    expect(sandbox.state.counters.faultsApplied).toBeGreaterThanOrEqual(12);
    expect(callbackTokens().length).toBeGreaterThanOrEqual(2);
    for (const token of callbackTokens()) expect(token).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  });

  it('no HTTP answer holds a secret, a token, a card number or a CVV echo', () => {
    const text = answers.join('\n');
    expect(answers.length).toBeGreaterThanOrEqual(14);
    for (const secret of [...secrets(), ...callbackTokens()]) expect(text).not.toContain(secret);
    for (const cvv of cvvs) for (const shape of cvvShapes(cvv)) expect(text).not.toContain(shape);
  });

  it('no log line holds one', () => {
    const text = service.logs.text;
    expect(text).toContain('provider call');
    for (const secret of [...secrets(), ...callbackTokens()]) expect(text).not.toContain(secret);
    for (const cvv of cvvs) for (const shape of cvvShapes(cvv)) expect(text).not.toContain(shape);
  });

  it('no row of the database holds one (a full dump)', async () => {
    const dump = await databaseDump(service);
    for (const secret of secrets()) expect(dump).not.toContain(secret);
    for (const cvv of cvvs) for (const shape of cvvShapes(cvv)) expect(dump).not.toContain(shape);
    // The dump did catch the rows that hold the echoes.
    expect(dump).toContain('cvv [REDACTED] declined');
  });

  it('no row holds a live callback token: the call log keeps the callback URLs with the token blanked', async () => {
    const dump = await databaseDump(service);
    expect(dump).toContain('successUrl');
    expect(dump).toMatch(/success\?token=\[REDACTED\]/);
    for (const token of callbackTokens()) expect(dump).not.toContain(token);
  });
});
