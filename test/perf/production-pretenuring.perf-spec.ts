import { randomUUID } from 'node:crypto';
import { mintToken } from '../../src/auth/token-minter';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { startChildService, type ChildService } from '../support/child-service';
import { databaseOfItsOwn } from '../support/database-of-its-own';
import { meanPromoted, promotedPerScavenge } from '../support/gc-trace';
import { orderRequest } from '../support/provider-factories';
import { startProdCommand, startProdEnvironment } from '../support/start-prod-command';
import { startTestSandbox } from '../support/test-service';

const JWT_SECRET = 'production-pretenuring-test-jwt-secret-0123';
/** Pay-ins in flight at once, as `npm run bench` sends them. */
const IN_FLIGHT = 20;
/** Pay-ins before V8's scavenges are read: pretenuring shows once the write path's code is optimized. */
const WARM_UP_PAYINS = 2000;
const MEASURED_PAYINS = 2000;

/**
 * Under concurrent pay-ins, V8's allocation-site pretenuring misfires: the objects of a pay-in
 * (axios's configuration and headers, Nest's and pg's per-request objects) are mostly still alive
 * at the scavenge that counts them, since the request is waiting on the provider, so V8 has their
 * sites allocate straight in the old generation. Dead there until the next full collection, they
 * keep the young objects they point to alive through every scavenge: about 880 KB promoted per
 * scavenge under `npm run bench`, a full collection every 2 s, and 21 % more CPU per pay-in
 * (docs/performance.md). `start:prod` (and the image) run node with
 * `--no-allocation-site-pretenuring`: about 120 KB per scavenge. Read from V8's own trace of each
 * scavenge (`--trace-gc-nvp`: `promoted=<bytes>`), in an instance run with `start:prod`'s node
 * options (its TypeScript entry: the bundle is `npm run build`'s), in production mode, on a
 * migrated database of its own.
 */
describe("an instance run with start:prod's node options", () => {
  let sandbox: RunningSandbox | undefined;
  let instance: ChildService | undefined;
  let database: { url: string; drop: () => Promise<void> } | undefined;

  afterAll(async () => {
    instance?.child.kill('SIGTERM');
    await instance?.exited;
    await sandbox?.close();
    await database?.drop();
  });

  it('takes concurrent pay-ins without promoting their objects (V8 pretenuring off)', async () => {
    // Its own database: its thousands of pay-ins spend the agent budget of the hour, which the
    // shared test database would then refuse to the files after it.
    database = await databaseOfItsOwn('production_pretenuring');
    sandbox = await startTestSandbox();
    // The provider's own hourly limit is not under test here: thousands of pay-ins pass.
    sandbox.state.admitAgentRequest = () => ({ allowed: true, retryAfterSeconds: 0 });
    const command = startProdCommand();
    const entry = command.nodeArgs.at(-1);
    expect(entry).toBe('dist/main.bundle.js');
    const nodeOptions = command.nodeArgs.slice(0, -1);
    instance = await startChildService(
      {
        ...startProdEnvironment({ databaseUrl: database.url, providerBaseUrl: sandbox.url, jwtSecret: JWT_SECRET }),
        PROVIDER_AGENT_HOURLY_LIMIT: '1000000',
        // One customer makes every pay-in of the measurement.
        PROVIDER_CUSTOMER_HOURLY_LIMIT: '1000000',
        LOG_LEVEL: 'warn',
      },
      {
        nodeArgs: ['--trace-gc-nvp', ...nodeOptions, '-r', '@swc-node/register', 'src/main.ts'],
        readyPath: '/health/ready',
        startTimeoutMs: 90_000,
      },
    );
    const { base, output } = instance;
    const customer = await mintToken({ sub: 'production-pretenuring', roles: ['customer'], ttl: '1h', secret: JWT_SECRET });
    const body = JSON.stringify(orderRequest({ wallet: TEST_WALLETS.NO_CALLBACK }));
    const payIn = async () => {
      const res = await fetch(`${base}/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${customer}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body,
      });
      await res.arrayBuffer();
      return res.status;
    };
    const payIns = async (count: number) => {
      let next = 0;
      const statuses = new Map<number, number>();
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next++ < count) {
            const status = await payIn();
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
            // The sandbox keeps every request it received: a few thousand pay-ins are kept small.
            if (next % 500 === 0) sandbox?.state.reset();
          }
        }),
      );
      return Object.fromEntries(statuses);
    };
    expect(await payIns(WARM_UP_PAYINS)).toEqual({ 201: WARM_UP_PAYINS });
    const traceFrom = output().length;
    expect(await payIns(MEASURED_PAYINS)).toEqual({ 201: MEASURED_PAYINS });
    const promoted = promotedPerScavenge(output().slice(traceFrom));
    // A pay-in allocates a few hundred KB: the measured pay-ins span dozens of scavenges.
    expect(promoted.length).toBeGreaterThan(10);
    // Pretenured: 526 to 554 KB per scavenge, on either database; not: 132 to 137 KB.
    expect(meanPromoted(promoted)).toBeLessThan(300 * 1024);
  }, 240_000);
});
