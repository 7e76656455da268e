import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { mintToken } from '../../src/auth/token-minter';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { payinReachesSandbox, startChildService, type ChildService } from '../support/child-service';
import { orderRequest } from '../support/provider-factories';
import { testDatabaseUrl } from '../support/test-database';
import { startTestSandbox } from '../support/test-service';

const JWT_SECRET = 'call-log-test-jwt-secret-0123456789abcdefghijk';
const CHILD_PROVIDER_TIMEOUT_MS = 1_500;

/**
 * The provider call log is written off the request path, in batches: a SIGTERM must not lose the
 * calls still queued. The stop lands while a pay-in waits on the provider: the request finishes
 * (UNKNOWN after the provider timeout), its call is queued as the service stops, and the row is
 * in the database once the process has exited.
 */
describe('the provider call log on SIGTERM', () => {
  let sandbox: RunningSandbox;
  let child: ChildService | undefined;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ hangMs: 60_000 });
  });
  afterAll(async () => {
    if (child && child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await sandbox?.close();
  });

  it('the call of a pay-in in flight at the stop is recorded before the process exits', async () => {
    child = await startChildService({
      DATABASE_URL: testDatabaseUrl(),
      PROVIDER_BASE_URL: sandbox.url,
      PROVIDER_TIMEOUT_MS: String(CHILD_PROVIDER_TIMEOUT_MS),
      AUTH_JWT_SECRET: JWT_SECRET,
      CALLBACK_SIGNING_SECRET: 'test-callback-signing-secret-0123456789abcdef',
      LOG_LEVEL: 'warn',
    });
    const token = await mintToken({ sub: 'cust_sigterm', roles: ['customer'], ttl: '1h', secret: JWT_SECRET });
    const payinSent = payinReachesSandbox(sandbox, TEST_WALLETS.TIMEOUT);
    const inFlight = fetch(`${child.base}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
      body: JSON.stringify(orderRequest({ wallet: TEST_WALLETS.TIMEOUT })),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as { reference: string; status: string } }));
    const reference = ((await payinSent).body as { order_id: string }).order_id;

    child.child.kill('SIGTERM');
    const answer = await inFlight;
    expect(answer).toMatchObject({ status: 201, body: { reference, status: 'UNKNOWN' } });
    expect(await Promise.race([child.exited, sleep(30_000).then(() => 'still running')])).toEqual({ code: 0, signal: null });

    const db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    try {
      const { rows } = await db.query<{ outcome: string }>(
        `SELECT outcome FROM provider_calls WHERE endpoint = 'payin.collect' AND request_body->>'order_id' = $1`,
        [reference],
      );
      expect(rows).toEqual([{ outcome: 'provider_timeout' }]);
    } finally {
      await db.end();
    }
  }, 120_000);
});
