import { CardsClient } from '../../src/provider/clients/cards.client';
import { PayinClient } from '../../src/provider/clients/payin.client';
import { ProviderTokenRepository } from '../../src/provider/provider-token.repository';
import { ProviderTokenService } from '../../src/provider/provider-token.service';
import { ProviderUnauthorizedError } from '../../src/provider/provider.errors';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { payinBody } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * The provider token is shared by all instances: each test gets its own sandbox and starts with
 * no token row (the row is keyed by provider host and API key).
 */
describe('provider token', () => {
  let sandbox: RunningSandbox;
  const services: TestService[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const service = await startTestService(sandbox, env);
    // The OS reuses ports: a sandbox on the port of an earlier one (of this file or another in this
    // worker's database) would find its token row under the same key. Every test starts with none; no
    // token is asked for before a test's own calls, so the instances of one test cannot race this.
    if (services.length === 0) await service.prisma.$executeRaw`DELETE FROM provider_tokens`;
    services.push(service);
    return service;
  };
  const authRequests = () => sandbox.state.requests.filter((r) => r.path === '/api/action/auth').length;

  beforeEach(async () => {
    sandbox = await startTestSandbox();
  });
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.close()));
    await sandbox.close();
  });

  it('50 concurrent callers in one instance cause exactly one token request', async () => {
    const service = await start();
    const cards = service.get(CardsClient);
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => cards.getCard('missing-card')));
    expect(results.every((r) => r.status === 'rejected' && (r.reason as { providerStatus?: number }).providerStatus === 404)).toBe(true);
    expect(authRequests()).toBe(1);
    expect(sandbox.state.requests.filter((r) => r.path === '/api/action/card/missing-card')).toHaveLength(50);
  });

  it('50 concurrent callers spread over two instances on one database cause exactly one token request', async () => {
    const [a, b] = await Promise.all([start(), start()]);
    const calls = Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).get(ProviderTokenService).getBearer());
    const bearers = await Promise.all(calls);
    expect(new Set(bearers.map((t) => t.token)).size).toBe(1);
    expect(authRequests()).toBe(1);
  });

  it('a new instance reuses the stored token instead of asking for one', async () => {
    const first = await start();
    const { token } = await first.get(ProviderTokenService).getBearer();
    const second = await start();
    expect((await second.get(ProviderTokenService).getBearer()).token).toBe(token);
    expect(authRequests()).toBe(1);
  });

  it('a refresh lease is released by its owner only, and then claimable by another', async () => {
    const tokens = (await start()).get(ProviderTokenRepository);
    const cacheKey = `lease-test-${Date.now()}`;
    expect(await tokens.tryClaimRefresh(cacheKey, 'owner-a', 60_000)).toEqual({ claimedAt: expect.any(Date) });
    expect(await tokens.tryClaimRefresh(cacheKey, 'owner-b', 60_000)).toBeUndefined();
    await tokens.releaseLease(cacheKey, 'owner-b');
    expect(await tokens.tryClaimRefresh(cacheKey, 'owner-b', 60_000)).toBeUndefined();
    await tokens.releaseLease(cacheKey, 'owner-a');
    expect(await tokens.tryClaimRefresh(cacheKey, 'owner-b', 60_000)).toEqual({ claimedAt: expect.any(Date) });
  });

  it('stores the token encrypted', async () => {
    const service = await start();
    const { token } = await service.get(ProviderTokenService).getBearer();
    const rows = await service.prisma.providerToken.findMany();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows.some((r) => r.tokenEncrypted?.startsWith('v2.'))).toBe(true);
  });

  it('a 401 causes one refresh and one retry, and the call succeeds', async () => {
    const service = await start();
    const payin = service.get(PayinClient);
    await payin.collect(payinBody(), { service: 1 });
    const oldToken = [...sandbox.state.tokens.keys()][0];
    sandbox.state.revokeTokens();

    const before = sandbox.state.requests.filter((r) => r.path === '/api/agent/bills/v3').length;
    await expect(payin.collect(payinBody(), { service: 1 })).resolves.toMatchObject({ status: 'PROCESSING' });
    const payins = sandbox.state.requests.filter((r) => r.path === '/api/agent/bills/v3').slice(before);
    expect(payins).toHaveLength(2);
    expect(payins[0].headers.authorization).toBe(`Bearer ${oldToken}`);
    expect(payins[1].headers.authorization).not.toBe(`Bearer ${oldToken}`);
    expect(authRequests()).toBe(2);
  });

  it('many callers hitting a 401 together on two instances all recover on their first retry, with one refresh per instance at most', async () => {
    const [a, b] = await Promise.all([start(), start()]);
    // Both instances hold the token before it is revoked, so that all twenty requests go out together.
    for (const instance of [a, b])
      await instance
        .get(CardsClient)
        .getCard('missing')
        .catch(() => undefined);
    sandbox.state.revokeTokens();
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).get(CardsClient).getCard('missing')));
    // Every retry reached the card route with a valid token: the sandbox answered 404, never 401.
    expect(outcomes.map((o) => o.status === 'rejected' && (o.reason as { providerStatus?: number }).providerStatus)).toEqual(
      Array.from({ length: 20 }, () => 404),
    );
    // The first token, then one renewal shared by each instance's ten refused requests. Usually b
    // takes the renewal a stored; when a's renewal is within the database clock's error (a few ms) of
    // the start of b's requests, b may not tell it from a token stored before the revocation and asks
    // for its own (renewAfterRejection: a first retry must never go out with a revoked token).
    expect(authRequests()).toBeGreaterThanOrEqual(2);
    expect(authRequests()).toBeLessThanOrEqual(3);
  });

  it('after a provider-wide revocation, an instance recovers on its first retry even when a newer (also revoked) token is stored', async () => {
    const [a, b] = await Promise.all([start(), start()]);
    const first = await a.get(ProviderTokenService).getBearer();
    expect((await b.get(ProviderTokenService).getBearer()).token).toBe(first.token);
    // Another instance renews the stored token (it found it due); `b` still holds the first in memory.
    await a.prisma
      .$executeRaw`UPDATE provider_tokens SET expires_at = now() + interval '2 seconds', obtained_at = now() - interval '1 hour'`;
    const third = await start();
    const stored = await third.get(ProviderTokenService).getBearer();
    expect(stored.token).not.toBe(first.token);
    expect(authRequests()).toBe(2);

    sandbox.state.revokeTokens(); // kills both tokens
    const before = sandbox.state.requestsTo('/api/action/card/missing').length;
    const error = await b
      .get(CardsClient)
      .getCard('missing')
      .catch((e: unknown) => e);
    // The retry reached the card route with a valid token: the sandbox answered 404, not 401.
    expect(error).toMatchObject({ providerStatus: 404 });
    const sent = sandbox.state.requestsTo('/api/action/card/missing').slice(before);
    expect(sent.map((r) => r.headers.authorization)).toEqual([
      `Bearer ${first.token}`,
      expect.not.stringMatching(new RegExp(`${first.token}|${stored.token}`)),
    ]);
    expect(authRequests()).toBe(3);
  });

  it('a 401 that persists after the refresh fails with ProviderUnauthorizedError, after exactly two attempts', async () => {
    const service = await start();
    sandbox.state.injectFault({ path: '/api/action/card/*', status: 401, body: { error: 401, message: 'Unauthenticated' }, times: 2 });
    await expect(service.get(CardsClient).getCard('any')).rejects.toBeInstanceOf(ProviderUnauthorizedError);
    expect(sandbox.state.requests.filter((r) => r.path === '/api/action/card/any')).toHaveLength(2);
    expect(authRequests()).toBe(2);
  });

  it('refreshes shortly before expireAt', async () => {
    await sandbox.close();
    sandbox = await startTestSandbox({ tokenTtlMs: 3000 });
    const service = await start();
    const tokens = service.get(ProviderTokenService);
    const first = await tokens.getBearer();
    expect((await tokens.getBearer()).token).toBe(first.token);
    // Lifetime 3 s: the margin is a tenth of it, so after 2.8 s the token is due for refresh.
    await new Promise((resolve) => setTimeout(resolve, 2800));
    const second = await tokens.getBearer();
    expect(second.token).not.toBe(first.token);
    expect(authRequests()).toBe(2);
  });
});
