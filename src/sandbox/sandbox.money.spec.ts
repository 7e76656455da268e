import { currencyDecimals, formatMinor, isLuhnValid, luhnCheckDigit, parseDecimalAmount } from './sandbox.money';
import { pathMatches } from './sandbox.faults';
import { SandboxState } from './sandbox.state';
import { TEST_WALLET_LIST, TEST_WALLETS, testWalletBehaviour } from './test-wallets';

describe('sandbox money helpers', () => {
  it('knows zero-decimal currencies', () => {
    expect(currencyDecimals('XAF')).toBe(0);
    expect(currencyDecimals('xof')).toBe(0);
    expect(currencyDecimals('EUR')).toBe(2);
    expect(currencyDecimals('USD')).toBe(2);
  });

  it('parses decimal strings exactly, refusing extra decimals instead of rounding', () => {
    expect(parseDecimalAmount('10.5', 2)).toEqual({ ok: true, minor: 1050n });
    expect(parseDecimalAmount('10.50', 2)).toEqual({ ok: true, minor: 1050n });
    expect(parseDecimalAmount('0.01', 2)).toEqual({ ok: true, minor: 1n });
    expect(parseDecimalAmount('1500', 0)).toEqual({ ok: true, minor: 1500n });
    expect(parseDecimalAmount('99999999999999999999.99', 2)).toEqual({ ok: true, minor: 9999999999999999999999n });
    for (const [value, decimals] of [
      ['10.5', 0],
      ['1.005', 2],
      ['-1', 2],
      ['1e3', 2],
      ['', 2],
      ['.5', 2],
      ['1.', 2],
      [' 1', 2],
    ] as const) {
      expect(parseDecimalAmount(value, decimals).ok).toBe(false);
    }
  });

  it('formats minor units with the currency decimals', () => {
    expect(formatMinor(1050n, 2)).toBe('10.50');
    expect(formatMinor(5n, 2)).toBe('0.05');
    expect(formatMinor(0n, 2)).toBe('0.00');
    expect(formatMinor(1500n, 0)).toBe('1500');
    expect(formatMinor(-125n, 2)).toBe('-1.25');
  });

  it('computes Luhn check digits', () => {
    expect(isLuhnValid('4111111111111111')).toBe(true);
    expect(isLuhnValid('4111111111111112')).toBe(false);
    expect(luhnCheckDigit('411111111111111')).toBe(1);
    expect(isLuhnValid('79927398713')).toBe(true);
  });
});

describe('sandbox state', () => {
  it('matches exact paths and * prefixes', () => {
    expect(pathMatches('/api/agent/*', '/api/agent/link/new')).toBe(true);
    expect(pathMatches('/api/agent/link/new', '/api/agent/link/new')).toBe(true);
    expect(pathMatches('/api/agent/link', '/api/agent/link/new')).toBe(false);
  });

  it('admits at most `limit` agent requests per IP in a rolling hour', () => {
    const state = new SandboxState();
    const t0 = 1_000_000_000;
    expect(state.admitAgentRequest('1.1.1.1', 2, t0).allowed).toBe(true);
    expect(state.admitAgentRequest('1.1.1.1', 2, t0 + 1000).allowed).toBe(true);
    const refused = state.admitAgentRequest('1.1.1.1', 2, t0 + 2000);
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: 3598 });
    expect(state.admitAgentRequest('2.2.2.2', 2, t0 + 2000).allowed).toBe(true);
    expect(state.admitAgentRequest('1.1.1.1', 2, t0 + 3_600_001).allowed).toBe(true);
    expect(state.admitAgentRequest('1.1.1.1', 2, t0 + 3_600_002).allowed).toBe(false);
  });

  it('consumes faults `times` times and validates them', () => {
    const state = new SandboxState();
    state.injectFault({ path: '/x', times: 2, status: 500 });
    expect(state.takeFault('GET', '/x')?.status).toBe(500);
    expect(state.takeFault('POST', '/x')?.status).toBe(500);
    expect(state.takeFault('GET', '/x')).toBeUndefined();
    state.injectFault({ path: '/y', method: 'post', status: 418 });
    expect(state.takeFault('GET', '/y')).toBeUndefined();
    expect(state.takeFault('POST', '/y')?.status).toBe(418);
    expect(() => state.injectFault({ path: 'y' })).toThrow();
    expect(() => state.injectFault({ path: '/y', times: 0 })).toThrow();
  });

  it('expires and revokes tokens', () => {
    const state = new SandboxState();
    const { token } = state.issueToken(60_000);
    const expired = state.issueToken(-1).token;
    expect(state.isTokenValid(token)).toBe(true);
    expect(state.isTokenValid(expired)).toBe(false);
    state.revokeTokens();
    expect(state.isTokenValid(token)).toBe(false);
  });

  it('documents every magic wallet', () => {
    expect(TEST_WALLET_LIST).toHaveLength(Object.keys(TEST_WALLETS).length);
    expect(testWalletBehaviour(TEST_WALLETS.TIMEOUT)).toBe('timeout');
    expect(testWalletBehaviour('237612345678')).toBe('success');
  });
});
