import fc from 'fast-check';
import { customerLimitReached, customerShareOf, rateLimitHeaders } from './customer-share';
import { countedCustomerOf } from './spends-provider-budget.decorator';
import { CustomerLimitReachedError, provesNotSent } from './provider.errors';

describe("a customer's share of the provider budget", () => {
  it('is written in the IETF RateLimit-Policy and RateLimit fields', () => {
    expect(rateLimitHeaders({ limit: 30, used: 18, freesInSeconds: 1800 })).toEqual({
      'ratelimit-policy': '"customer";q=30;w=3600',
      ratelimit: '"customer";r=12;t=1800',
    });
    expect(rateLimitHeaders({ limit: 30, used: 0, freesInSeconds: 3660 }).ratelimit).toBe('"customer";r=30;t=0');
    expect(rateLimitHeaders({ limit: 5, used: 7, freesInSeconds: 10 }).ratelimit).toBe('"customer";r=0;t=10');
  });

  it('any share: r is never negative nor above q, and both fields parse as the draft writes them', () => {
    fc.assert(
      fc.property(fc.nat(1_000_000), fc.nat(2_000_000), fc.nat(4000), (limit, used, frees) => {
        const headers = rateLimitHeaders({ limit, used, freesInSeconds: frees });
        const match = /^"customer";r=(\d+);t=(\d+)$/.exec(headers.ratelimit);
        expect(match).not.toBeNull();
        expect(Number(match![1])).toBe(Math.max(0, limit - used));
        expect(headers['ratelimit-policy']).toBe(`"customer";q=${limit};w=3600`);
      }),
    );
  });

  it('a take that counted no customer shows nothing', () => {
    expect(customerShareOf({ customerRefused: false, customerLimit: null, customerUsed: 0, customerFreesInMs: 0 })).toBeUndefined();
  });

  it('a refusal is 429 customer_limit_reached with Retry-After, r=0, and proves nothing was sent (the key is freed)', () => {
    const error = customerLimitReached({ customerRefused: true, customerLimit: 30, customerUsed: 29, customerFreesInMs: 1_234_001 });
    expect(error).toBeInstanceOf(CustomerLimitReachedError);
    expect(error).toMatchObject({ status: 429, code: 'customer_limit_reached', retryAfterSeconds: 1235, outcomeKnown: true });
    expect(error.headers).toEqual({
      'retry-after': '1235',
      'ratelimit-policy': '"customer";q=30;w=3600',
      ratelimit: '"customer";r=0;t=1235',
    });
    expect(error.problemExtensions).toEqual({ outcomeKnown: true, retryAfterSeconds: 1235 });
    expect(provesNotSent(error)).toBe(true);
  });

  it('counts a customer-only token for its sub; finance and admin tokens for the merchant alone', () => {
    expect(countedCustomerOf({ id: 'alice', roles: ['customer'] })).toBe('alice');
    expect(countedCustomerOf({ id: 'bob', roles: ['finance'] })).toBeNull();
    expect(countedCustomerOf({ id: 'carol', roles: ['customer', 'admin'] })).toBeNull();
    expect(countedCustomerOf(undefined)).toBeNull();
  });
});
