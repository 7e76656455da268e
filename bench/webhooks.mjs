// Webhook delivery: deliveries per second to a local receiver, and the p95 from an event's commit
// (events.created_at) to its first attempt arriving. `npm run bench:webhooks`.
// Real PostgreSQL: BENCH_DATABASE_URL (default the local server); a fresh database, dropped after.
// The service runs as `npm start` runs it (TypeScript entry, development defaults); the receiver
// answers 200 at once, in this process. Two phases:
//   burst:  BENCH_WEBHOOK_BURST events (default 3,000) committed in batches of 100 as fast as possible;
//           deliveries/s = events / (last arrival - first commit).
//   steady: BENCH_WEBHOOK_RATE events a second (default 250) for BENCH_WEBHOOK_SECONDS (default 10);
//           the p50/p95/max from commit to first attempt.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { bearer, freshDatabase, percentile, ROOT, sleep } from './scale-support.mjs';
import { migrateDatabase } from './database.mjs';
import { freePort, startGroup, stopGroup, waitUntilAnswering } from './processes.mjs';

const BURST = Number(process.env.BENCH_WEBHOOK_BURST ?? 3_000);
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 250);
const SECONDS = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 10);

function startReceiver() {
  const arrivals = new Map(); // webhook-id -> first arrival (ms)
  let hits = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits++;
      const id = req.headers['webhook-id'];
      if (!arrivals.has(id)) arrivals.set(id, Date.now());
      res.writeHead(200).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${server.address().port}/hook`, arrivals, hits: () => hits, close: () => server.close() }),
    ),
  );
}

/** `count` PROCESSING orders in one statement: each insert's trigger writes its event and its delivery. */
async function commitEvents(db, count) {
  await db.query(
    `INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email, updated_at)
     SELECT id, 'ord_' || replace(id::text, '-', ''), 'bench', 'PROCESSING', 1500, 'XAF', 1, '237600000006', 'bench', 'Bench', 'bench@example.com', now()
     FROM (SELECT gen_random_uuid() AS id FROM generate_series(1, $1)) g`,
    [count],
  );
}

async function eventTimes(db, since) {
  const { rows } = await db.query(`SELECT id, created_at FROM events WHERE created_at >= $1`, [since]);
  return rows;
}

async function until(what, predicate, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

async function main() {
  const database = await freshDatabase('bench_webhooks');
  const receiver = await startReceiver();
  const logFile = join(tmpdir(), `bench-webhooks-${process.pid}.log`);
  let service;
  const db = new pg.Client({ connectionString: database.url });
  try {
    migrateDatabase(ROOT, database.url, ['ignore', 'ignore', 'inherit']);
    const port = await freePort();
    service = startGroup('service', process.execPath, ['-r', '@swc-node/register', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'development', DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn' },
      logFile,
    });
    const base = `http://127.0.0.1:${port}`;
    await waitUntilAnswering(service, `${base}/health/live`);
    const token = await bearer('bench-admin', ['admin']);
    const registered = await fetch(`${base}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ url: receiver.url, description: 'bench' }),
    });
    if (registered.status !== 201) throw new Error(`endpoint registration answered ${registered.status}: ${await registered.text()}`);
    await db.connect();

    // Warm-up: code compiled, connections open.
    await commitEvents(db, 200);
    await until('the warm-up delivered', () => receiver.arrivals.size >= 200);

    // Burst.
    const before = receiver.arrivals.size;
    const burstFrom = new Date();
    for (let sent = 0; sent < BURST; sent += 100) await commitEvents(db, Math.min(100, BURST - sent));
    await until('the burst delivered', () => receiver.arrivals.size >= before + BURST);
    const burst = await eventTimes(db, burstFrom);
    const firstCommit = Math.min(...burst.map((e) => e.created_at.getTime()));
    const lastArrival = Math.max(...burst.map((e) => receiver.arrivals.get(e.id)));
    const burstRate = BURST / ((lastArrival - firstCommit) / 1000);

    // Steady load: a batch every 100 ms.
    await sleep(1_000);
    const steadyFrom = new Date();
    const perTick = Math.max(1, Math.round(RATE / 10));
    const started = Date.now();
    for (let tick = 0; tick < SECONDS * 10; tick++) {
      await commitEvents(db, perTick);
      const wait = started + (tick + 1) * 100 - Date.now();
      if (wait > 0) await sleep(wait);
    }
    const steady = await eventTimes(db, steadyFrom);
    await until('the steady load delivered', () => steady.every((e) => receiver.arrivals.has(e.id)));
    const latencies = steady.map((e) => receiver.arrivals.get(e.id) - e.created_at.getTime()).sort((a, b) => a - b);
    const steadySeconds =
      (Math.max(...steady.map((e) => receiver.arrivals.get(e.id))) - Math.min(...steady.map((e) => e.created_at.getTime()))) / 1000;

    // The receiver answers before the service records the outcome: the last deliveries are read once recorded.
    const unrecorded = async () => (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'PENDING'`)).rows[0].n;
    await until('the last deliveries recorded', async () => (await unrecorded()) === 0, 10_000).catch(() => undefined);
    const { rows } = await db.query(`SELECT status::text, count(*)::int AS n FROM webhook_deliveries GROUP BY 1 ORDER BY 1`);
    console.log(
      `burst:  ${BURST} events delivered in ${((lastArrival - firstCommit) / 1000).toFixed(2)} s: ${burstRate.toFixed(0)} deliveries/s (goal >= 200)`,
    );
    console.log(
      `steady: ${steady.length} events at ${RATE}/s over ${steadySeconds.toFixed(1)} s: commit to first attempt p50 ${percentile(latencies, 50)} ms, p95 ${percentile(latencies, 95)} ms, max ${latencies.at(-1)} ms (goal p95 < 2000 ms)`,
    );
    console.log(
      `receiver: ${receiver.hits()} requests for ${receiver.arrivals.size} events; deliveries: ${rows.map((r) => `${r.status} ${r.n}`).join(', ')}`,
    );
    console.log(burstRate >= 200 && percentile(latencies, 95) < 2000 ? 'PASS' : 'FAIL');
  } finally {
    await db.end().catch(() => undefined);
    if (service) await stopGroup(service);
    receiver.close();
    await database.drop();
    rmSync(logFile, { force: true });
  }
}

await main();
