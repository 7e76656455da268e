import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { mintToken } from '../../src/auth/token-minter';
import { column, sqlStatement } from '../../src/database/sql-statement';
import { LISTENER_APPLICATION_NAME } from '../../src/orders/order-events.service';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { startChildService, type ChildService } from '../support/child-service';
import { orderRequest } from '../support/provider-factories';
import { CURRENT_MINUTE, usedAt } from '../../src/provider/agent-budget-window';
import { testDatabaseUrl } from '../support/test-database';
import { freePort, startTestSandbox, startTestService } from '../support/test-service';
import { poolerTestsUnavailable, startPgBouncer, type RunningPgBouncer } from './pgbouncer';

const JWT_SECRET = 'pooler-suite-jwt-secret-0123456789abcdefghijkl';
const CALLBACK_SECRET = 'pooler-suite-callback-secret-0123456789abcdef';
const AGENT_HOURLY_LIMIT = 16;

/** A statement for the run without `pgbouncer=true`: named, as Database sends them straight to PostgreSQL. */
const BACKEND_PID = sqlStatement(
  'two-instances.pooler-spec',
  'test',
  'test_pooler_backend_pid',
  `
  SELECT pg_backend_pid() AS pid`,
  { pid: column.int4 },
);

// Run only when asked for (its own jest project): without PgBouncer or PostgreSQL it fails and says why, never skips.
const unavailable = poolerTestsUnavailable();
if (unavailable) {
  describe('two instances behind PgBouncer in transaction mode', () => {
    it('has PgBouncer and PostgreSQL', () => {
      throw new Error(`the pooler suite cannot run: ${unavailable}`);
    });
  });
} else {
  describe('two instances behind PgBouncer in transaction mode', poolerSuite);
}

/**
 * Two instances of the service (the real entry point, as child processes) on one database, both
 * reaching it through PgBouncer 1.18 in transaction mode (`?pgbouncer=true`), listening and
 * migrating on PostgreSQL directly (DATABASE_DIRECT_URL). Each names the other as its public URL,
 * so the provider's callbacks for an order arrive at the instance that did not create it.
 */
function poolerSuite() {
  let sandbox: RunningSandbox;
  let bouncer: RunningPgBouncer;
  let db: Client;
  let a: ChildService;
  let b: ChildService;
  let token: string;
  const began = Date.now();

  beforeAll(async () => {
    sandbox = await startTestSandbox({ callbackDelayMs: 200 });
    bouncer = await startPgBouncer(testDatabaseUrl());
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    await db.query('DELETE FROM provider_tokens');
    const [portA, portB] = await Promise.all([freePort(), freePort()]);
    const env = (otherPort: number) => ({
      DATABASE_URL: bouncer.urlFor(testDatabaseUrl(), { pooled: true }),
      DATABASE_DIRECT_URL: testDatabaseUrl(),
      PROVIDER_BASE_URL: sandbox.url,
      PROVIDER_AGENT_HOURLY_LIMIT: String(AGENT_HOURLY_LIMIT),
      AUTH_JWT_SECRET: JWT_SECRET,
      CALLBACK_SIGNING_SECRET: CALLBACK_SECRET,
      PUBLIC_BASE_URL: `http://127.0.0.1:${otherPort}`,
      LOG_LEVEL: 'warn',
    });
    [a, b] = await Promise.all([startChildService(env(portB), { port: portA }), startChildService(env(portA), { port: portB })]);
    token = await mintToken({ sub: 'cust_pooler', roles: ['customer'], ttl: '1h', secret: JWT_SECRET });
  }, 90_000);
  beforeEach(async () => {
    // Every test starts with the hour's budgets unspent: the merchant's, and the one customer's share.
    await db.query('DELETE FROM agent_budgets');
    await db.query('DELETE FROM customer_budgets');
  });
  afterAll(async () => {
    for (const child of [a, b]) if (child && child.child.exitCode === null) child.child.kill('SIGKILL');
    await Promise.all([a?.exited, b?.exited]);
    await db?.end();
    await bouncer?.stop();
    await sandbox?.close();
    console.log(`pooler suite: ${((Date.now() - began) / 1000).toFixed(1)} s`);
  });

  const createOrder = (on: ChildService, wallet: string) =>
    fetch(`${on.base}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
      body: JSON.stringify(orderRequest({ wallet })),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as { id: string; status: string; code?: string } }));
  const statusesOf = async (ids: string[]) =>
    new Map(
      (
        await db.query<{ id: string; status: string }>(`SELECT id::text, status::text FROM orders WHERE id = ANY($1::uuid[])`, [ids])
      ).rows.map((row) => [row.id, row.status]),
    );
  const listeners = async () =>
    (
      await db.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database() AND query LIKE 'LISTEN%'`,
        [LISTENER_APPLICATION_NAME],
      )
    ).rows;
  async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}; A: ${a.output()} B: ${b.output()}`);
      await sleep(100);
    }
  }
  /** The callback URL the provider was given for `orderId`, sent to `to` instead of the instance it names. */
  const callbackPathOf = (orderId: string, outcome: 'success' | 'failure') => {
    const payIn = [...sandbox.state.payIns.values()].find((p) => p.successUrl.includes(orderId));
    if (!payIn) throw new Error(`no pay-in reached the sandbox for ${orderId}`);
    const url = new URL(outcome === 'success' ? payIn.successUrl : payIn.failureUrl);
    return url.pathname + url.search;
  };

  it('applies each pay-in callback exactly once, created on either instance and delivered to the other', async () => {
    const created = await Promise.all(
      Array.from({ length: 12 }, (_, i) => {
        const on = i % 2 ? a : b;
        return createOrder(on, i % 3 ? TEST_WALLETS.SUCCESS : TEST_WALLETS.FAILURE).then((res) => ({ ...res, on }));
      }),
    );
    // PROCESSING, or already decided when the callback overtook the answer.
    expect(created.map((c) => [c.status, c.body.status])).toEqual(
      created.map(() => [201, expect.stringMatching(/^(PROCESSING|SUCCEEDED|FAILED)$/)]),
    );
    const ids = created.map((c) => c.body.id);
    await waitUntil('every order is decided by its callback', async () =>
      [...(await statusesOf(ids)).values()].every((s) => s === 'SUCCEEDED' || s === 'FAILED'),
    );

    for (const { on, body } of created) {
      const other = on === a ? b : a;
      const deliveries = sandbox.state.callbackDeliveries.filter((d) => d.url.includes(body.id));
      expect(deliveries.map((d) => [new URL(d.url).origin, d.httpStatus])).toEqual([[other.base, 200]]);
      // The provider sends it again, this time to the instance that created the order: a duplicate.
      const [first] = deliveries;
      const again = await fetch(`${on.base}${new URL(first.url).pathname}${new URL(first.url).search}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(first.payload),
      });
      expect(again.status).toBe(200);
    }
    const { rows } = await db.query<{ order_id: string; applied: number; duplicates: number; transitions: number }>(
      `SELECT o.id::text AS order_id,
         (SELECT count(*)::int FROM provider_callbacks c WHERE c.order_id = o.id AND c.result = 'APPLIED') AS applied,
         (SELECT count(*)::int FROM provider_callbacks c WHERE c.order_id = o.id AND c.result = 'DUPLICATE') AS duplicates,
         (SELECT count(*)::int FROM order_status_changes h WHERE h.order_id = o.id AND h.callback_id IS NOT NULL) AS transitions
       FROM orders o WHERE o.id = ANY($1::uuid[])`,
      [ids],
    );
    expect(rows).toHaveLength(12);
    expect(rows.filter((r) => r.applied !== 1 || r.duplicates !== 1 || r.transitions !== 1)).toEqual([]);
  });

  it('shows on a live stream of instance A what happens through instance B, also after the listeners were cut', async () => {
    await waitUntil('both instances listen on PostgreSQL directly', async () => (await listeners()).length === 2);
    // Their statements go through the pooler, their listeners do not.
    const pooled = (await bouncer.clients()).filter((c) => c.database === new URL(testDatabaseUrl()).pathname.slice(1));
    expect(pooled.length).toBeGreaterThan(0);
    expect(pooled.filter((c) => c.application_name === LISTENER_APPLICATION_NAME)).toEqual([]);
    const order = (await createOrder(b, TEST_WALLETS.NO_CALLBACK)).body;
    const stream = await fetch(`${a.base}/v1/orders/${order.id}/events`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    let text = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
    })();
    await waitUntil('the stream sends the current status', () => text.includes('"PROCESSING"'));

    // Both listening connections are lost; B decides the order before A has listened again.
    await db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, [
      LISTENER_APPLICATION_NAME,
    ]);
    const callback = await fetch(`${b.base}${callbackPathOf(order.id, 'success')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(callback.status).toBe(200);
    await waitUntil('the stream on A sends SUCCEEDED', () => text.includes('"SUCCEEDED"'));
    await reading;
    expect(text.match(/"status":"(\w+)"/g)).toEqual(['"status":"PROCESSING"', '"status":"SUCCEEDED"']);
    // And both listen again, on their own.
    await waitUntil('both instances listen again', async () => (await listeners()).length === 2);
  });

  it('counts the pay-ins of both instances in one hourly agent budget', async () => {
    const agentCallsBefore = sandbox.state.requests.filter((r) => r.path.startsWith('/api/agent/')).length;
    const attempts = await Promise.all(
      Array.from({ length: AGENT_HOURLY_LIMIT + 6 }, (_, i) => {
        const on = i % 2 ? a : b;
        return createOrder(on, TEST_WALLETS.NO_CALLBACK).then((res) => ({ ...res, on }));
      }),
    );
    const accepted = attempts.filter((x) => x.status === 201);
    const refused = attempts.filter((x) => x.body.code === 'provider_budget_exhausted');
    // Each instance sent 11: the limit of 16 is reached only by counting both.
    expect([accepted.length, refused.length]).toEqual([AGENT_HOURLY_LIMIT, 6]);
    expect(sandbox.state.requests.filter((r) => r.path.startsWith('/api/agent/')).length - agentCallsBefore).toBe(AGENT_HOURLY_LIMIT);
    const counted = await db.query<{ used: number }>(`SELECT ${usedAt('m', CURRENT_MINUTE)} AS used FROM agent_budgets m`);
    expect(counted.rows[0].used).toBe(AGENT_HOURLY_LIMIT);
  });

  it('fetched the provider token once, for both instances', async () => {
    expect(sandbox.state.counters.authRequests).toBe(1);
    const bearers = new Set(sandbox.state.requests.filter((r) => r.path.startsWith('/api/agent/')).map((r) => r.headers.authorization));
    expect(bearers.size).toBe(1);
    expect((await db.query('SELECT cache_key FROM provider_tokens')).rowCount).toBe(1);
  });

  it('fails through the same pooler without pgbouncer=true: named statements meet other sessions', async () => {
    // In this process, so that the error of a statement is seen as PostgreSQL reported it.
    const unmarked = await startTestService(sandbox, {
      DATABASE_URL: bouncer.urlFor(testDatabaseUrl(), { pooled: false }),
      DATABASE_DIRECT_URL: testDatabaseUrl(),
      LOG_LEVEL: 'silent',
    });
    const marked = await startTestService(sandbox, {
      DATABASE_URL: bouncer.urlFor(testDatabaseUrl(), { pooled: true }),
      DATABASE_DIRECT_URL: testDatabaseUrl(),
      LOG_LEVEL: 'silent',
    });
    try {
      const load = async (service: typeof marked) => {
        const errors: string[] = [];
        for (let round = 0; round < 20 && errors.length === 0; round++) {
          const results = await Promise.allSettled(Array.from({ length: 30 }, () => service.prisma.run(BACKEND_PID, [])));
          for (const result of results) if (result.status === 'rejected') errors.push(String((result.reason as Error).message));
        }
        return errors;
      };
      expect(await load(marked)).toEqual([]);
      const errors = await load(unmarked);
      expect(errors.length).toBeGreaterThan(0);
      expect(errors).toContainEqual(
        expect.stringMatching(/^prepared statement "test_pooler_backend_pid_\w+" (does not exist|already exists)$/),
      );
    } finally {
      await Promise.all([unmarked.close(), marked.close()]);
    }
  });
}
