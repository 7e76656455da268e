import { createServer, type Server } from 'node:net';
import { CardsClient } from '../../src/provider/clients/cards.client';
import { DistributionClient } from '../../src/provider/clients/distribution.client';
import { PayinClient } from '../../src/provider/clients/payin.client';
import { WalletLinkClient } from '../../src/provider/clients/wallet-link.client';
import {
  ProviderAuthenticationError,
  ProviderBadResponseError,
  ProviderConnectionLostError,
  ProviderError,
  ProviderRejectedError,
  ProviderServerError,
  ProviderTimeoutError,
  ProviderUnreachableError,
} from '../../src/provider/provider.errors';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardUserBody, payinBody, uniqueEmail } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { ProviderCallLog } from '../../src/provider/provider-call-log';

async function caught(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ProviderError) return error;
    throw error;
  }
  throw new Error('expected a ProviderError, the call succeeded');
}

/** Each error the provider can produce maps to its typed error, which says whether the outcome is known. */
describe('provider error mapping', () => {
  let sandbox: RunningSandbox;
  let service: TestService;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ hangMs: 3000 });
    service = await startTestService(sandbox, { PROVIDER_TIMEOUT_MS: '400' });
  });
  afterEach(() => sandbox.state.clearFaults());
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  const payin = () => service.get(PayinClient);

  it('pay-in 400 shape (b): the FAILURE envelope is a known rejection carrying the envelope', async () => {
    const error = await caught(payin().collect(payinBody({ wallet: TEST_WALLETS.INSUFFICIENT_FUNDS }), { service: 1 }));
    expect(error).toBeInstanceOf(ProviderRejectedError);
    const rejected = error as ProviderRejectedError;
    expect(rejected).toMatchObject({
      shape: 'payin_failure_envelope',
      code: 'provider_payin_rejected',
      outcomeKnown: true,
      providerStatus: 400,
    });
    expect(rejected.providerMessage).toBe('Insufficient funds');
    expect(rejected.body).toMatchObject({ success: false, code: 400, status: 'FAILURE' });
  });

  it('pay-in 400 shape (a): {success:false, message} is a known rejection', async () => {
    sandbox.state.injectFault({ path: '/api/agent/bills/v3', status: 400, body: { success: false, message: 'Invalid operation provide' } });
    const error = await caught(payin().collect(payinBody(), { service: 1 }));
    expect(error).toBeInstanceOf(ProviderRejectedError);
    expect(error).toMatchObject({
      shape: 'success_false',
      code: 'provider_rejected',
      outcomeKnown: true,
      providerMessage: 'Invalid operation provide',
    });
  });

  it('token endpoint {error, message}: wrong credentials are a ProviderAuthenticationError', async () => {
    // Another API key: the shared token of the right key must not be reused for it.
    const misconfigured = await startTestService(sandbox, { PROVIDER_API_KEY: 'not-the-key', PROVIDER_SECRET_KEY: 'not-the-secret' });
    try {
      const error = await caught(misconfigured.get(PayinClient).collect(payinBody(), { service: 1 }));
      expect(error).toBeInstanceOf(ProviderAuthenticationError);
      expect(error).toMatchObject({ code: 'provider_authentication_failed', outcomeKnown: true, providerMessage: 'Invalid credentials' });
      expect(error.detail).not.toContain('not-the-secret');
    } finally {
      await misconfigured.close();
    }
  });

  it('wallet link {code, success:false, message} is a known rejection with the provider code', async () => {
    const error = await caught(service.get(WalletLinkClient).linkUser({ email: uniqueEmail(), phone: '65-00', phoneCountry: '+237' }));
    expect(error).toBeInstanceOf(ProviderRejectedError);
    expect(error).toMatchObject({ shape: 'code_success_message', code: 'provider_link_rejected', providerCode: '400', outcomeKnown: true });
  });

  it('init and distribution {success:false, message} are known rejections', async () => {
    const error = await caught(
      service.get(DistributionClient).initTransaction({
        payment_receiver: 'X',
        payment_id: `p_${Date.now()}`,
        amount: 100,
        distribution: [{ matricule: 'UNKNOWN', rate: 10 }],
      }),
    );
    expect(error).toBeInstanceOf(ProviderRejectedError);
    expect(error).toMatchObject({ shape: 'success_false', outcomeKnown: true });
    sandbox.state.injectFault({
      path: '/api/agent/link/fiat-distribution',
      status: 200,
      body: { success: false, message: 'Distribution refused' },
    });
    const fiat = await caught(
      service
        .get(DistributionClient)
        .distributeFiat({ data: { payer: 'A', currency: 'XAF', amount: 100, distribution: [{ matricule: 'M', rate: 10 }] } }),
    );
    expect(fiat).toMatchObject({ shape: 'success_false', providerMessage: 'Distribution refused', outcomeKnown: true });
  });

  it('card endpoints {error, message} refusals are known rejections', async () => {
    const error = await caught(service.get(CardsClient).getCard('card_does_not_exist'));
    expect(error).toMatchObject({ shape: 'error_message', providerCode: 404, providerStatus: 404, outcomeKnown: true });
    const invalid = await caught(service.get(CardsClient).createUser(cardUserBody({ email: 'not-an-email' })));
    expect(invalid).toMatchObject({ shape: 'error_message', providerStatus: 400 });
  });

  it('a 500 with a non-JSON body is a ProviderServerError: outcome unknown', async () => {
    const error = await caught(payin().collect(payinBody({ wallet: TEST_WALLETS.SERVER_ERROR }), { service: 1 }));
    expect(error).toBeInstanceOf(ProviderServerError);
    expect(error).toMatchObject({ code: 'provider_unavailable', outcomeKnown: false, providerStatus: 500, status: 502 });
  });

  it('a 503 with a JSON body is a ProviderServerError too', async () => {
    sandbox.state.injectFault({ path: '/api/action/card/*', status: 503, body: { message: 'maintenance' } });
    const error = await caught(service.get(CardsClient).getCard('any'));
    expect(error).toMatchObject({ code: 'provider_unavailable', outcomeKnown: false, providerMessage: 'maintenance' });
  });

  it('a 4xx with a non-JSON body is a known rejection of shape non_json', async () => {
    sandbox.state.injectFault({ path: '/api/agent/bills/v3', status: 400, rawBody: '<html>Bad Request</html>', contentType: 'text/html' });
    const error = await caught(payin().collect(payinBody(), { service: 1 }));
    expect(error).toMatchObject({ shape: 'non_json', outcomeKnown: true, providerStatus: 400 });
  });

  it('a 200 with an unreadable body is a ProviderBadResponseError: outcome unknown', async () => {
    sandbox.state.injectFault({ path: '/api/agent/bills/v3', status: 200, rawBody: 'OK', contentType: 'text/plain' });
    const error = await caught(payin().collect(payinBody(), { service: 1 }));
    expect(error).toBeInstanceOf(ProviderBadResponseError);
    expect(error.outcomeKnown).toBe(false);
  });

  it('no answer within PROVIDER_TIMEOUT_MS is a ProviderTimeoutError: outcome unknown', async () => {
    const started = Date.now();
    const error = await caught(payin().collect(payinBody({ wallet: TEST_WALLETS.TIMEOUT }), { service: 1 }));
    expect(error).toBeInstanceOf(ProviderTimeoutError);
    expect(error).toMatchObject({ code: 'provider_timeout', outcomeKnown: false, status: 504 });
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('a connection dropped after the request was sent is a ProviderConnectionLostError: outcome unknown', async () => {
    sandbox.state.injectFault({ path: '/api/agent/bills/v3', dropConnection: true });
    const error = await caught(payin().collect(payinBody(), { service: 1 }));
    expect(error).toBeInstanceOf(ProviderConnectionLostError);
    expect(error.outcomeKnown).toBe(false);
  });

  it('a refused connection is a ProviderUnreachableError: nothing was sent', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe: Server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const unreachable = await startTestService(sandbox, { PROVIDER_BASE_URL: `http://127.0.0.1:${closedPort}` });
    try {
      const error = await caught(unreachable.get(PayinClient).collect(payinBody(), { service: 1 }));
      expect(error).toBeInstanceOf(ProviderUnreachableError);
      expect(error.outcomeKnown).toBe(true);
    } finally {
      await unreachable.close();
    }
  });

  it('records failed calls in the call log with their error code', async () => {
    await service.get(ProviderCallLog).flush();
    const rows = await service.prisma.providerCall.findMany({ where: { errorCode: 'provider_timeout', endpoint: 'payin.collect' } });
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows[0]).toMatchObject({ endpoint: 'payin.collect', httpStatus: null, outcome: 'provider_timeout' });
  });
});
