// One pass of the retention job on a year of traffic (`npm run build && node bench/prune.mjs`).
// Real PostgreSQL: BENCH_DATABASE_URL (default the local server); a fresh database, seeded with
// BENCH_ORDERS orders (default 1,000,000) spread over a year, each with two provider calls and two
// events, each event delivered once (one attempt), dropped after. Prints how long `npm run
// data:prune` takes and what it deleted, and the latency of POST /v1/orders (p50/p99, one request
// at a time) on the idle service, then while the pass runs: the pay-in must not notice it.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { bearer, freshDatabase, percentile, ROOT, startService } from './scale-support.mjs';

const ORDERS = Number(process.env.BENCH_ORDERS ?? 1_000_000);
/** Pay-ins timed on the idle service, before the pass. */
const IDLE_POSTS = Number(process.env.BENCH_POSTS ?? 100);
/** Pay-ins timed while the pass runs, one every DURING_INTERVAL_MS at most: with the warm-up and the
 * idle ones they stay under the in-process sandbox's 600 agent calls an hour, past which it answers 429. */
const DURING_POSTS = 420;
const DURING_INTERVAL_MS = 250;
const ENDPOINT_ID = '00000000-0000-4000-8000-000000000001';

async function seed(db) {
  const started = Date.now();
  await db.query(
    `INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email,
                         created_at, updated_at)
     SELECT gen_random_uuid(), 'ord_bench_' || i, 'customer-' || (i % 1000), 'SUCCEEDED', (100 + i % 50000)::numeric, 'XAF', 1,
            '2376' || lpad((i % 100000000)::text, 8, '0'), 'Order ' || i, 'Payer ' || (i % 1000), 'payer' || (i % 1000) || '@example.com',
            now() - make_interval(secs => ($1::int - i) * (31536000.0 / $1::int)),
            now() - make_interval(secs => ($1::int - i) * (31536000.0 / $1::int))
     FROM generate_series(1, $1::int) AS i`,
    [ORDERS],
  );
  // The endpoint is DISABLED: the orders paid during the bench fan out to nothing, and nothing is delivered while it is timed.
  await db.query(
    `INSERT INTO webhook_endpoints (id, url, events, status, secret_encrypted) VALUES ($1, 'https://receiver.example/hook', '{}', 'DISABLED', 'x')`,
    [ENDPOINT_ID],
  );
  await db.query(
    `INSERT INTO provider_calls (id, area, method, endpoint, url, http_status, outcome, duration_ms, request_body, response_body, created_at)
     SELECT gen_random_uuid(), 'payin', 'POST', endpoint, 'https://provider.example' || endpoint, 200, 'ok', 120,
            jsonb_build_object('order_id', o.reference, 'amount', o.amount::text, 'wallet', o.wallet),
            jsonb_build_object('status', 'SUCCESS', 'order_id', o.reference), o.created_at
     FROM orders o CROSS JOIN (VALUES ('/api/agent/bills/v3'), ('/api/agent/bills/status')) AS e(endpoint)`,
  );
  await db.query(
    `INSERT INTO events (id, type, resource_type, resource_id, previous_status, snapshot, created_at)
     SELECT 'evt_' || replace(o.id::text, '-', '') || t.suffix, t.type, 'order', o.id, t.previous,
            jsonb_build_object('id', o.id, 'status', t.status, 'amount', o.amount::text, 'payer', o.payer), o.created_at + t.lag
     FROM orders o CROSS JOIN (VALUES ('p', 'order.processing', 'PENDING', 'PROCESSING', interval '0'),
                                      ('s', 'order.succeeded', 'PROCESSING', 'SUCCEEDED', interval '30 seconds'))
       AS t(suffix, type, previous, status, lag)`,
  );
  await db.query(
    `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, attempt_count, next_attempt_at, created_at, completed_at)
     SELECT gen_random_uuid(), id, $1, 'DELIVERED', 1, created_at, created_at, created_at + interval '1 second' FROM events`,
    [ENDPOINT_ID],
  );
  await db.query(
    `INSERT INTO webhook_attempts (delivery_id, at, http_status, duration_ms, response_body)
     SELECT id, created_at, 204, 80, '' FROM webhook_deliveries`,
  );
  for (const table of ['orders', 'provider_calls', 'events', 'webhook_deliveries', 'webhook_attempts'])
    await db.query(`VACUUM ANALYZE ${table}`);
  await db.query('CHECKPOINT');
  return Date.now() - started;
}

/** One pay-in, its answer awaited; how long it took (ms). */
async function payIn(url, token) {
  const started = performance.now();
  const response = await fetch(`${url}/v1/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({
      amount: '1500',
      currency: 'XAF',
      wallet: '237600000006',
      service: 1,
      description: 'bench',
      payer: 'Bench Payer',
      payerEmail: 'bench@example.com',
    }),
  });
  await response.arrayBuffer();
  if (response.status !== 201) throw new Error(`POST /v1/orders answered ${response.status}`);
  return performance.now() - started;
}

const summary = (latencies) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  return `n ${sorted.length}, p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms`;
};

async function main() {
  const database = await freshDatabase('bench_prune');
  let service;
  try {
    service = await startService(database.url, { PROVIDER_AGENT_HOURLY_LIMIT: '100000', PROVIDER_CUSTOMER_HOURLY_LIMIT: '100000' });
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    console.log(`seeded ${ORDERS} orders, ${2 * ORDERS} calls, ${2 * ORDERS} events, deliveries and attempts in ${await seed(db)} ms`);
    const token = await bearer('bench-payer', ['customer']);
    for (let i = 0; i < 30; i++) await payIn(service.url, token); // warm-up
    const idle = [];
    for (let i = 0; i < IDLE_POSTS; i++) idle.push(await payIn(service.url, token));
    console.log(`POST /v1/orders, idle:           ${summary(idle)}`);

    const started = performance.now();
    const pass = spawn(process.execPath, ['-r', '@swc-node/register', 'src/retention/data-prune.cli.ts'], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'development', DATABASE_URL: database.url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    pass.stdout.on('data', (chunk) => (output += chunk));
    let running = true;
    const exited = new Promise((resolveExit) => pass.once('exit', (code) => ((running = false), resolveExit(code))));
    const during = [];
    while (running && during.length < DURING_POSTS) {
      const next = performance.now() + DURING_INTERVAL_MS;
      during.push(await payIn(service.url, token));
      await new Promise((resolveWait) => setTimeout(resolveWait, Math.max(0, next - performance.now())));
    }
    const code = await exited;
    console.log(`data:prune pass: ${((performance.now() - started) / 1000).toFixed(1)} s, exit ${code}\n${output.trim()}`);
    console.log(`POST /v1/orders, during the pass: ${summary(during)}`);
    await db.end();
  } finally {
    await service?.stop?.();
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
