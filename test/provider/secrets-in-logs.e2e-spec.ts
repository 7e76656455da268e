import { CardsClient } from '../../src/provider/clients/cards.client';
import { PayinClient } from '../../src/provider/clients/payin.client';
import { WalletLinkClient } from '../../src/provider/clients/wallet-link.client';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardUserBody, payinBody, uniqueEmail } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { ProviderCallLog } from '../../src/provider/provider-call-log';

/** No log line and no stored call record holds a provider secret, a token, a card number, a CVV or a link apikey. */
describe('secrets stay out of logs and records', () => {
  const SECRET_KEY = 'prov-secret-0d1c7e9f4b2a';
  const SP_TOKEN = 'sp-auth-token-9a8b7c6d5e';
  const API_KEY = 'prov-apikey-77aa55cc33ee';
  let sandbox: RunningSandbox;
  let service: TestService;
  const revealed: string[] = [];

  beforeAll(async () => {
    sandbox = await startTestSandbox({ apiKey: API_KEY, secretKey: SECRET_KEY, spAuthToken: SP_TOKEN });
    service = await startTestService(sandbox, {
      PROVIDER_API_KEY: API_KEY,
      PROVIDER_SECRET_KEY: SECRET_KEY,
      PROVIDER_SP_AUTH_TOKEN: SP_TOKEN,
      LOG_LEVEL: 'trace',
    });

    await service.get(PayinClient).collect(payinBody(), { service: 1 });
    revealed.push(...sandbox.state.tokens.keys());
    sandbox.state.revokeTokens(); // forces a 401, a refresh and a retry: the paths that handle tokens most
    const cards = service.get(CardsClient);
    const user = await cards.createUser(cardUserBody());
    const card = await cards.createCard(user.user_id, { balance: '50.00', currency: 'EUR' });
    const details = await cards.getCard(card.card_id);
    const link = await service.get(WalletLinkClient).linkUser({ email: uniqueEmail('secret'), phone: '650009999', phoneCountry: '+237' });
    sandbox.state.injectFault({ path: '/api/action/card/*', status: 500, body: { message: `boom ${SECRET_KEY}` } });
    await cards.getCard(card.card_id).catch(() => undefined);
    // A CVV is three digits: searched as a JSON string value, or it would match any number.
    revealed.push(card.card_number, `"${card.cvv}"`, details.card_number, link.apikey);
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  const secrets = () => [SECRET_KEY, SP_TOKEN, API_KEY, ...sandbox.state.tokens.keys(), ...revealed];

  it('issued at least two tokens along the way (a refresh happened)', () => {
    expect(sandbox.state.requests.filter((r) => r.path === '/api/action/auth')).toHaveLength(2);
    expect(service.logs.lines.length).toBeGreaterThan(5);
  });

  it('no log line contains any of them', () => {
    const text = service.logs.text;
    for (const secret of secrets()) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/\b\d{16}\b/);
  });

  it('no provider call record contains any of them', async () => {
    await service.get(ProviderCallLog).flush();
    const stored = JSON.stringify(await service.prisma.providerCall.findMany());
    for (const secret of secrets()) expect(stored).not.toContain(secret);
  });
});
