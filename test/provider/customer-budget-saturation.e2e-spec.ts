import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { customer } from '../support/orders-client';
import { apiUser, startLinkHosts, uniqueLinkEmail, type LinkHosts } from '../wallet-links/link-hosts';

/** Small, so that saturating it stays quick; the merchant-wide budget stays far above it. */
const CUSTOMER_LIMIT = 5;
const ATTEMPTS = 13;
const CONCURRENCY = 4;

/** Runs `work` for 0..n-1, `concurrency` at a time; answers the results in order. */
async function inWaves<T>(n: number, concurrency: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        results[i] = await work(i);
      }
    }),
  );
  return results;
}

describe('one customer saturating its share of the provider budget (issue 34, reproduction 1)', () => {
  let hosts: LinkHosts;
  beforeAll(async () => {
    hosts = await startLinkHosts({ PROVIDER_CUSTOMER_HOURLY_LIMIT: String(CUSTOMER_LIMIT), PROVIDER_AGENT_HOURLY_LIMIT: '600' });
    await hosts.syncTokens();
  });
  afterAll(() => hosts.close());

  const payinsOf = (customerId: string) => hosts.service.prisma.order.count({ where: { customerId } });

  it('gets at most its limit, then customer_limit_reached with Retry-After and RateLimit; the others still pay and link', async () => {
    const greedy = await customer(hosts.service);
    const sentBefore = hosts.base.state.payIns.size;
    const answers = await inWaves(ATTEMPTS, CONCURRENCY, () => greedy.createOrder({ amount: '100' }));

    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 429);
    expect(created).toHaveLength(CUSTOMER_LIMIT);
    expect(refused).toHaveLength(ATTEMPTS - CUSTOMER_LIMIT);
    expect(await payinsOf(greedy.sub)).toBe(CUSTOMER_LIMIT);
    expect(hosts.base.state.payIns.size - sentBefore).toBe(CUSTOMER_LIMIT);

    for (const answer of refused) {
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({ code: 'customer_limit_reached', status: 429, outcomeKnown: true });
      const retryAfter = Number(answer.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(3_000);
      expect(retryAfter).toBeLessThanOrEqual(3_660);
      expect(answer.body.retryAfterSeconds).toBe(retryAfter);
      expect(answer.headers['ratelimit-policy']).toBe(`"customer";q=${CUSTOMER_LIMIT};w=3600`);
      expect(answer.headers['ratelimit']).toMatch(/^"customer";r=0;t=\d+$/);
    }
    for (const answer of created) {
      expect(answer.headers['ratelimit-policy']).toBe(`"customer";q=${CUSTOMER_LIMIT};w=3600`);
      expect(answer.headers['ratelimit']).toMatch(/^"customer";r=[0-4];t=\d+$/);
    }
    const remaining = created.map((a) => Number(/r=(\d+)/.exec(String(a.headers['ratelimit']))![1])).sort();
    expect(remaining).toEqual([0, 1, 2, 3, 4]);

    // Its wallet link is refused the same way: no provider call, the email's claim released, nothing stored.
    const linksSent = hosts.link.state.walletLinks.size;
    const greedyLinker = await apiUser(hosts.service, greedy.sub);
    const email = uniqueLinkEmail();
    const link = await greedyLinker.createLink({ email, phone: '650000002', phoneCountry: '+237' });
    expect(link.status).toBe(429);
    expect(link.body.code).toBe('customer_limit_reached');
    expect(link.headers['retry-after']).toBeDefined();
    expect(hosts.link.state.walletLinks.size).toBe(linksSent);
    expect(await hosts.service.prisma.walletLink.count({ where: { ownerId: greedy.sub } })).toBe(0);

    // Another customer is untouched: its pay-in and its wallet link go through, with its own share in the headers.
    const other = await customer(hosts.service);
    const payin = await other.createOrder({ amount: '100' });
    expect(payin.status).toBe(201);
    expect(payin.headers['ratelimit']).toBe(
      `"customer";r=${CUSTOMER_LIMIT - 1};t=${/t=(\d+)/.exec(String(payin.headers['ratelimit']))![1]}`,
    );
    const linker = await apiUser(hosts.service, other.sub);
    const otherLink = await linker.createLink({ email: uniqueLinkEmail(), phone: '650000001', phoneCountry: '+237' });
    expect(otherLink.status).toBe(201);
    expect(otherLink.headers['ratelimit']).toMatch(new RegExp(`^"customer";r=${CUSTOMER_LIMIT - 2};t=\\d+$`));
  });

  it('a refused request stores nothing and frees its Idempotency-Key: reused once the customer may call again', async () => {
    const blocked = await customer(hosts.service);
    const admin = await hosts.service.bearer(`admin_${randomUUID().slice(0, 6)}`, 'admin');
    const limits = (method: 'put' | 'delete', body?: object) =>
      request(hosts.service.server)[method](`/v1/customer-limits/${blocked.sub}`).auth(admin, { type: 'bearer' }).send(body);
    expect((await limits('put', { providerCallsPerHour: 0, note: 'blocked while we look into it' })).status).toBe(200);

    const key = randomUUID();
    const refused = await blocked.createOrder({ amount: '100' }, key);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('customer_limit_reached');
    expect(refused.headers['ratelimit-policy']).toBe('"customer";q=0;w=3600');
    expect(await payinsOf(blocked.sub)).toBe(0);

    expect((await limits('delete')).status).toBe(200);
    const again = await blocked.createOrder({ amount: '100' }, key);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await payinsOf(blocked.sub)).toBe(1);
  });

  it('staff requests count against the merchant-wide budget only: no customer share, no RateLimit fields', async () => {
    const finance = await apiUser(hosts.service, `fin_${randomUUID().slice(0, 6)}`, 'finance');
    const answers = await inWaves(CUSTOMER_LIMIT + 2, 2, (i) =>
      finance.createLink({ email: uniqueLinkEmail(), phone: `65100${String(i).padStart(4, '0')}`, phoneCountry: '+237' }),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201));
    expect(answers.every((a) => a.headers['ratelimit'] === undefined)).toBe(true);
  });
});
