import { CardsModule } from '../../src/cards/cards.module';
import type { RecordedRequest } from '../../src/sandbox/sandbox.state';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, type CardsClientOf } from '../support/cards-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * What the card spec files share: every card route against the sandbox, with the provider's card
 * parameter names and x-sp-auth-token set to non-default values on both sides, so that what
 * reaches the provider can be asserted on the wire (path, method, headers, query, body).
 */

export const SP_TOKEN = 'sp-token-cards-e2e-5f4e3d2c1b';
export const PARAMS = { operation: 'op_sel', amount: 'amt_value', currency: 'cur_code' };

/** The service and sandbox of a spec file; `sandbox`, `service` and `alice` are set once its beforeAll has run. */
export interface CardsContext {
  sandbox: RunningSandbox;
  service: TestService;
  /** A customer with no card user yet. */
  alice: CardsClientOf;
  requestsTo(path: string, method?: string): RecordedRequest[];
  operationCalls(providerCardId: string): RecordedRequest[];
  cardCalls(): RecordedRequest[];
  /** The provider saw our bearer token (one it issued and still honours) and the configured x-sp-auth-token. */
  expectProviderAuth(req: RecordedRequest): void;
}

/** Registers the hooks of a spec file: a sandbox and a service with the cards module, provider timeout 500 ms. */
export function useCardsService(): CardsContext {
  const context = {
    requestsTo: (path: string, method?: string) => context.sandbox.state.requestsTo(path, method),
    operationCalls: (providerCardId: string) => context.requestsTo(`/api/action/card/transaction/${providerCardId}`, 'GET'),
    cardCalls: () => context.requestsTo('/api/action/card*'),
    expectProviderAuth(req: RecordedRequest) {
      expect(req.headers['x-sp-auth-token']).toBe(SP_TOKEN);
      const bearer = /^Bearer (\S+)$/.exec(String(req.headers.authorization));
      expect(bearer).not.toBeNull();
      expect(context.sandbox.state.isTokenValid(bearer![1])).toBe(true);
      expect(req.headers['x-api-key']).toBeUndefined();
    },
  } as unknown as CardsContext;

  beforeAll(async () => {
    context.sandbox = await startTestSandbox({
      spAuthToken: SP_TOKEN,
      cardOperationParam: PARAMS.operation,
      cardAmountParam: PARAMS.amount,
      cardCurrencyParam: PARAMS.currency,
    });
    context.service = await startTestService(
      context.sandbox,
      {
        PROVIDER_SP_AUTH_TOKEN: SP_TOKEN,
        CARD_OPERATION_PARAM: PARAMS.operation,
        CARD_AMOUNT_PARAM: PARAMS.amount,
        CARD_CURRENCY_PARAM: PARAMS.currency,
        PROVIDER_TIMEOUT_MS: '500',
      },
      [CardsModule],
    );
    context.alice = await cardsClient(context.service);
  });
  afterAll(async () => {
    await context.service?.close();
    await context.sandbox?.close();
  });

  return context;
}
