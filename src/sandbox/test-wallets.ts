/**
 * Magic pay-in wallets of the provider sandbox: the `wallet` field of `POST /api/agent/bills/v3`
 * chooses the outcome, like the test card numbers of a card processor's test mode.
 */

export type TestWalletBehaviour =
  | 'success'
  | 'failure'
  | 'insufficient_funds'
  | 'timeout'
  | 'server_error'
  | 'no_callback'
  | 'conflicting_callbacks'
  | 'duplicate_callback'
  | 'lost_answer';

export const TEST_WALLETS = {
  /** Accepted (PROCESSING), then `successUrl` is called after `callbackDelayMs`. */
  SUCCESS: '237600000001',
  /** Accepted (PROCESSING), then `failureUrl` is called after `callbackDelayMs`. */
  FAILURE: '237600000002',
  /** Rejected at once: 400, full envelope (status FAILURE), message `Insufficient funds`. */
  INSUFFICIENT_FUNDS: '237600000003',
  /** Never answered within `hangMs` (the request hangs; see docs/sandbox.md for what happens next). */
  TIMEOUT: '237600000004',
  /** 500 with the non-JSON body `<html>Internal Server Error</html>` (text/html). */
  SERVER_ERROR: '237600000005',
  /** Accepted (PROCESSING) and never called back. */
  NO_CALLBACK: '237600000006',
  /** Accepted, `successUrl` called, then after another delay `failureUrl` too (contradiction). */
  CONFLICTING_CALLBACKS: '237600000007',
  /** Accepted, `successUrl` called twice (duplicate delivery). */
  DUPLICATE_CALLBACK: '237600000008',
  /** Processed (the money moved), but answered 502 and never called back: UNKNOWN until a person decides. */
  LOST_ANSWER: '237600000013',
} as const;

export type TestWallet = (typeof TEST_WALLETS)[keyof typeof TEST_WALLETS];

export interface TestWalletInfo {
  wallet: TestWallet;
  name: keyof typeof TEST_WALLETS;
  behaviour: TestWalletBehaviour;
  description: string;
}

export const TEST_WALLET_LIST: readonly TestWalletInfo[] = [
  {
    wallet: TEST_WALLETS.SUCCESS,
    name: 'SUCCESS',
    behaviour: 'success',
    description: 'accepted (200 PROCESSING), then successUrl is called after callbackDelayMs',
  },
  {
    wallet: TEST_WALLETS.FAILURE,
    name: 'FAILURE',
    behaviour: 'failure',
    description: 'accepted (200 PROCESSING), then failureUrl is called after callbackDelayMs',
  },
  {
    wallet: TEST_WALLETS.INSUFFICIENT_FUNDS,
    name: 'INSUFFICIENT_FUNDS',
    behaviour: 'insufficient_funds',
    description: "rejected: 400 full envelope (status FAILURE), message 'Insufficient funds'; no callback",
  },
  {
    wallet: TEST_WALLETS.TIMEOUT,
    name: 'TIMEOUT',
    behaviour: 'timeout',
    description:
      'no answer for hangMs (or until the client disconnects), then 504 text/html if still connected; ' +
      'the payment is nevertheless processed: successUrl is called callbackDelayMs after the hang ends',
  },
  {
    wallet: TEST_WALLETS.SERVER_ERROR,
    name: 'SERVER_ERROR',
    behaviour: 'server_error',
    description: '500 with the non-JSON body <html>Internal Server Error</html> (text/html); no callback',
  },
  {
    wallet: TEST_WALLETS.NO_CALLBACK,
    name: 'NO_CALLBACK',
    behaviour: 'no_callback',
    description: 'accepted (200 PROCESSING) and never called back',
  },
  {
    wallet: TEST_WALLETS.CONFLICTING_CALLBACKS,
    name: 'CONFLICTING_CALLBACKS',
    behaviour: 'conflicting_callbacks',
    description: 'accepted, successUrl is called, then after another callbackDelayMs failureUrl too',
  },
  {
    wallet: TEST_WALLETS.DUPLICATE_CALLBACK,
    name: 'DUPLICATE_CALLBACK',
    behaviour: 'duplicate_callback',
    description: 'accepted, successUrl is called twice (the same payload, callbackDelayMs apart)',
  },
  {
    wallet: TEST_WALLETS.LOST_ANSWER,
    name: 'LOST_ANSWER',
    behaviour: 'lost_answer',
    description:
      'processed (the pay-in is SUCCESS in GET /__sandbox/state, like a provider dashboard) but answered 502 text/html and never called back: ' +
      'the order stays UNKNOWN until a person resolves it',
  },
];

/** Behaviour for a wallet; any wallet that is not magic succeeds like `TEST_WALLETS.SUCCESS`. */
export function testWalletBehaviour(wallet: string): TestWalletBehaviour {
  return TEST_WALLET_LIST.find((w) => w.wallet === wallet)?.behaviour ?? 'success';
}
