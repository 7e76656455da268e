// Lists and CSV export at 1,000,000 orders (`npm run bench:scale`, builds first). Real PostgreSQL:
// BENCH_DATABASE_URL (default the local server); a fresh database, seeded with one
// INSERT … SELECT generate_series, dropped after. Prints the page latencies (p50/p99) of
// GET /v1/orders for finance under each filter, first and deep keyset pages, for the service and,
// read right after it in the same run, for the bare server of bench/bare-server.mjs (the same
// statements without the framework: the floor this machine sets), the plans of the list queries,
// and the CSV export's rate and the service's RSS growth while it streams.
import { request as httpRequest, Agent } from 'node:http';
import { createRequire } from 'node:module';
import pg from 'pg';
import { bearer, freshDatabase, mb, percentile, startBareServer, startService } from './scale-support.mjs';

// The list statements of the build the service runs (npm run bench:scale builds first).
const requireBuilt = createRequire(import.meta.url);
const { LIST_ORDERS, LIST_FILTERS } = requireBuilt('../dist/orders/orders.statements.js');
const { keysetListStatementFor, keysetListValues } = requireBuilt('../dist/database/list-queries.js');

const ORDERS = Number(process.env.BENCH_ORDERS ?? 1_000_000);
/**
 * Pages timed per scenario and server. The p99 of 1,000 is the 11th-slowest page; of 200 (until
 * 2026-11-23) it was the 3rd-slowest, and moved between 6 and 16 ms from run to run on its own.
 */
const PAGES = Number(process.env.BENCH_PAGES ?? 1000);
/** Pages read, unmeasured, under every scenario first: the p99 is then the steady state's, not the code's first compilation. */
const WARMUP_PAGES = Number(process.env.BENCH_WARMUP_PAGES ?? 50);

async function seed(db) {
  const started = Date.now();
  // A year of orders, newest last; statuses, currencies and review flags in realistic shares.
  await db.query(
    `INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email,
                         needs_review, created_at, updated_at)
     SELECT gen_random_uuid(), 'ord_bench_' || i, 'customer-' || (i % 1000),
            (ARRAY['SUCCEEDED','SUCCEEDED','SUCCEEDED','SUCCEEDED','SUCCEEDED','SUCCEEDED','FAILED','FAILED','EXPIRED','UNKNOWN'])[1 + i % 10]::"OrderStatus",
            (100 + i % 50000)::numeric, (ARRAY['XAF','XAF','XAF','XOF'])[1 + i % 4], 1, '2376' || lpad((i % 100000000)::text, 8, '0'),
            'Order ' || i, 'Payer ' || (i % 1000), 'payer' || (i % 1000) || '@example.com', i % 100 = 0,
            now() - make_interval(secs => ($1::int - i) * (31536000.0 / $1::int)),
            now() - make_interval(secs => ($1::int - i) * (31536000.0 / $1::int))
     FROM generate_series(1, $1::int) AS i`,
    [ORDERS],
  );
  await db.query('VACUUM ANALYZE orders');
  // The bulk load's dirty pages written out now: otherwise the checkpointer writes them (hundreds of
  // MB) while the pages are timed, and the run measures the load's aftermath, not the lists.
  await db.query('CHECKPOINT');
  return Date.now() - started;
}

/**
 * The pages are read through node:http on one kept-alive connection, not fetch: undici's fetch
 * costs the client more CPU and garbage per request than the service spends on the page, and its
 * pauses (on the same two cores) were part of the measured tail.
 */
const keptAlive = new Agent({ keepAlive: true, maxSockets: 1 });

function getJson(url, token) {
  return new Promise((resolve, reject) => {
    httpRequest(url, { agent: keptAlive, headers: { authorization: `Bearer ${token}` } }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

async function timedPages(base, token, name, query, cursorAt, pages = PAGES) {
  const times = [];
  let cursor = cursorAt;
  for (let i = 0; i < pages; i++) {
    const params = new URLSearchParams(query);
    if (cursor) params.set('cursor', cursor);
    const started = performance.now();
    const { status, body: page } = await getJson(`${base}/v1/orders?${params}`, token);
    times.push(performance.now() - started);
    if (status !== 200) throw new Error(`${name}: ${status} ${JSON.stringify(page)}`);
    // Following nextCursor walks on from the starting point; at the end of the set, start over.
    cursor = page.nextCursor ?? cursorAt;
  }
  times.sort((a, b) => a - b);
  return { name, p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** The cursor the API would hand out after the order at `offset` (newest first) under `where`. */
async function cursorAtOffset(db, where, offset) {
  const { rows } = await db.query(
    `SELECT created_at, id::text FROM orders WHERE ${where} ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT 1`,
    [offset],
  );
  return Buffer.from(`${rows[0].created_at.toISOString()}|${rows[0].id}`).toString('base64url');
}

async function exportCsv(base, token, service) {
  const rssBefore = service.rssBytes();
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, service.rssBytes())), 50);
  const started = performance.now();
  const res = await fetch(`${base}/v1/orders/export.csv`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`);
  let lines = 0;
  let bytes = 0;
  for await (const chunk of res.body) {
    bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  return { rows: lines - 1, bytes, seconds, rowsPerSecond: (lines - 1) / seconds, rssGrowth: rssPeak - rssBefore };
}

function planNodes(plan) {
  return [plan['Node Type'] + (plan['Index Name'] ? ` ${plan['Index Name']}` : ''), ...(plan.Plans ?? []).flatMap(planNodes)];
}

async function main() {
  const database = await freshDatabase('bench_lists');
  let service;
  let bare;
  // Interrupted (Ctrl-C, a kill), the run still stops the servers and drops its database of a million rows.
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.once(signal, () => {
      console.error(`${signal}: stopping the service and dropping ${database.url}`);
      void Promise.all([service?.stop(), bare?.stop()])
        .then(() => database.drop())
        .finally(() => process.exit(1));
    });
  const db = new pg.Client({ connectionString: database.url });
  try {
    service = await startService(database.url);
    await db.connect();
    console.log(`seeded ${ORDERS.toLocaleString('en')} orders in ${await seed(db)} ms`);
    const finance = await bearer('bench-finance', ['finance']);
    const customer = await bearer('customer-7', ['customer']);
    const half = Math.floor(ORDERS / 2);
    const scenarios = [
      ['finance, first pages', finance, {}, undefined],
      ['finance, from the middle', finance, {}, await cursorAtOffset(db, 'true', half)],
      ['finance, status=FAILED, from the middle', finance, { status: 'FAILED' }, await cursorAtOffset(db, `status = 'FAILED'`, half / 5)],
      ['finance, currency=XOF, from the middle', finance, { currency: 'XOF' }, await cursorAtOffset(db, `currency = 'XOF'`, half / 4)],
      ['finance, needsReview=true', finance, { needsReview: 'true' }, undefined],
      [
        'finance, status=UNKNOWN & currency=XOF & last quarter',
        finance,
        { status: 'UNKNOWN', currency: 'XOF', from: new Date(Date.now() - 91 * 86400_000).toISOString() },
        undefined,
      ],
      [
        'customer, own orders, from the middle',
        customer,
        {},
        await cursorAtOffset(db, `customer_id = 'customer-7'`, Math.floor(ORDERS / 2000)),
      ],
    ];
    bare = await startBareServer(database.url);
    const servers = [
      ['service', service.url],
      ['bare', bare.url],
    ];
    // A yardstick only if it answers what the service answers: the same first page, byte for byte.
    for (const [name, token, query, cursor] of scenarios) {
      const params = new URLSearchParams(query);
      if (cursor) params.set('cursor', cursor);
      const [ours, yardstick] = await Promise.all(servers.map(([, url]) => getJson(`${url}/v1/orders?${params}`, token)));
      if (JSON.stringify(ours.body) !== JSON.stringify(yardstick.body))
        throw new Error(`${name}: the bare server's page differs from the service's`);
    }
    for (const [, url] of servers)
      for (const [name, token, query, cursor] of scenarios) await timedPages(url, token, name, query, cursor, WARMUP_PAGES);
    console.log(`\nGET /v1/orders, ${PAGES} pages of 50 each after ${WARMUP_PAGES} unmeasured under each (goal p99 < 10 ms), read by the`);
    console.log('service and by the bare server of bench/bare-server.mjs in turn; * marks the first of the two to read them:');
    // The first reader of a walk meets the pages past the warm-up cold; the two take turns at it.
    for (const [i, [name, token, query, cursor]] of scenarios.entries()) {
      const order = i % 2 === 0 ? servers : [...servers].reverse();
      const measured = {};
      for (const [server, url] of order) measured[server] = await timedPages(url, token, name, query, cursor);
      const cell = (server) =>
        `${server === order[0][0] ? '*' : ' '}p50 ${measured[server].p50.toFixed(1).padStart(5)} ms  p99 ${measured[server].p99.toFixed(1).padStart(5)} ms`;
      console.log(`  ${name.padEnd(54)} service ${cell('service')}   bare ${cell('bare')}`);
    }
    await bare.stop();

    // The statements the service sends, on the generic plan a prepared statement settles on after
    // five executions (plan_cache_mode = force_generic_plan), run at the scenarios' positions.
    console.log('\nplans of the list statements (generic plans, EXPLAIN ANALYZE, limit 51):');
    await db.query('SET plan_cache_mode = force_generic_plan');
    const middle = (cursor) => {
      const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
      return { at: new Date(at), id };
    };
    const plans = [
      ['no filter', {}, middle(scenarios[1][3])],
      ['status', { status: 'FAILED' }, middle(scenarios[2][3])],
      ['currency', { currency: 'XOF' }, middle(scenarios[3][3])],
      ['needs review', { needsReview: true }, undefined],
      ['status, currency, from', { status: 'UNKNOWN', currency: 'XOF', from: new Date(Date.now() - 91 * 86400_000) }, undefined],
      ['customer', { customerId: 'customer-7' }, middle(scenarios[6][3])],
    ];
    for (const [i, [name, filter, after]] of plans.entries()) {
      const statement = keysetListStatementFor(LIST_ORDERS, LIST_FILTERS, filter);
      await db.query(`PREPARE bench_plan_${i} AS ${statement.text}`);
      const values = keysetListValues(LIST_FILTERS, filter, { limit: 51, after }).map((v) => (v instanceof Date ? v.toISOString() : v));
      const { rows } = await db.query(
        `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE bench_plan_${i}(${values.map((v) => db.escapeLiteral(String(v))).join(', ')})`,
      );
      const [plan] = rows[0]['QUERY PLAN'];
      console.log(`  ${name.padEnd(24)} ${planNodes(plan.Plan).join(' → ')}   ${plan['Execution Time'].toFixed(2)} ms (${statement.name})`);
    }

    console.log('\nGET /v1/orders/export.csv, every order (goal ≥ 100,000 rows/s, < 100 MB growth):');
    const csv = await exportCsv(service.url, finance, service);
    console.log(
      `  ${csv.rows.toLocaleString('en')} rows, ${mb(csv.bytes)} in ${csv.seconds.toFixed(1)} s: ${Math.round(csv.rowsPerSecond).toLocaleString('en')} rows/s, RSS growth ${mb(csv.rssGrowth)}`,
    );
  } finally {
    await db.end().catch(() => undefined);
    await bare?.stop();
    await service?.stop();
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
