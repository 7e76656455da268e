import { randomUUID } from 'node:crypto';
import { mintToken } from '../../src/auth/token-minter';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startChildService, type ChildService } from '../support/child-service';
import { buildOncePerRun } from '../support/production-build';
import { orderRequest } from '../support/provider-factories';
import { testDatabaseUrl } from '../support/test-database';
import { startProdCommand, startProdEnvironment } from '../support/start-prod-command';
import { startTestSandbox } from '../support/test-service';

const JWT_SECRET = 'production-bundle-limit-test-jwt-secret-0123456789';
/** PROVIDER_CUSTOMER_HOURLY_LIMIT is left unset: the production default is what is checked. */
const DEFAULT_CUSTOMER_LIMIT = 30;
const ATTEMPTS = DEFAULT_CUSTOMER_LIMIT + 6;

/**
 * Issue 34, reproduction 1, against what `npm run build` makes and `npm run start:prod` runs: one
 * customer token sends more pay-ins than its hourly share (4 at a time, new keys, 100 XAF); it gets
 * its share and then `customer_limit_reached`, while another customer still pays.
 */
describe('the production bundle: one customer cannot spend the provider budget of all', () => {
  let sandbox: RunningSandbox;
  let service: ChildService;

  beforeAll(async () => {
    await buildOncePerRun();
    sandbox = await startTestSandbox();
    const command = startProdCommand();
    const env = {
      ...startProdEnvironment({ databaseUrl: testDatabaseUrl(), providerBaseUrl: sandbox.url, jwtSecret: JWT_SECRET }),
      LOG_LEVEL: 'warn',
    };
    service = await startChildService(env, { nodeArgs: command.nodeArgs, readyPath: '/health/ready' });
  }, 300_000);

  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGTERM');
    await service?.exited;
    await sandbox?.close();
  });

  const payIn = (token: string) =>
    fetch(`${service.base}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify(orderRequest({ amount: '100' })),
    });

  it(`${ATTEMPTS} pay-ins of one customer: ${DEFAULT_CUSTOMER_LIMIT} go to the provider, the rest are customer_limit_reached; another customer pays`, async () => {
    const greedy = await mintToken({ sub: `greedy-${randomUUID()}`, roles: ['customer'], ttl: '1h', secret: JWT_SECRET });
    const sentBefore = sandbox.state.payIns.size;
    const statuses: number[] = [];
    const refusals: Response[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < ATTEMPTS) {
          next++;
          const answer = await payIn(greedy);
          statuses.push(answer.status);
          if (answer.status === 429) refusals.push(answer);
          else await answer.arrayBuffer();
        }
      }),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(DEFAULT_CUSTOMER_LIMIT);
    expect(refusals).toHaveLength(ATTEMPTS - DEFAULT_CUSTOMER_LIMIT);
    expect(sandbox.state.payIns.size - sentBefore).toBe(DEFAULT_CUSTOMER_LIMIT);
    for (const refusal of refusals) {
      expect(refusal.headers.get('content-type')).toContain('application/problem+json');
      expect(((await refusal.json()) as { code: string }).code).toBe('customer_limit_reached');
      expect(Number(refusal.headers.get('retry-after'))).toBeGreaterThan(3_000);
      expect(refusal.headers.get('ratelimit-policy')).toBe(`"customer";q=${DEFAULT_CUSTOMER_LIMIT};w=3600`);
      expect(refusal.headers.get('ratelimit')).toMatch(/^"customer";r=0;t=\d+$/);
    }

    const other = await mintToken({ sub: `other-${randomUUID()}`, roles: ['customer'], ttl: '1h', secret: JWT_SECRET });
    const paid = await payIn(other);
    expect(paid.status).toBe(201);
    expect(((await paid.json()) as { status: string }).status).toBe('PROCESSING');
  });
});
