// 10,000 idle live streams on one instance: the service's RSS growth and the statements it sends
// while they idle. `npm run bench:streams` (builds first); BENCH_STREAMS sets the number.
// Real PostgreSQL: BENCH_DATABASE_URL (default the local server); a fresh database, dropped after.
import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { bearer, freshDatabase, mb, sleep, startService } from './scale-support.mjs';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000);
const PER_USER = 20;
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 10_000);

function openStream(base, token, orderId) {
  return new Promise((resolve, reject) => {
    const url = new URL(`/v1/orders/${orderId}/events`, base);
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, agent: false, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        const client = { status: res.statusCode, snapshot: false, keepAlives: 0, ended: false, close: () => req.destroy() };
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          if (chunk.includes('event: status')) client.snapshot = true;
          client.keepAlives += chunk.split(': keep-alive').length - 1;
        });
        res.on('close', () => (client.ended = true));
        resolve(client);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function openMany(base, tokens, orderId, concurrency = 200) {
  const clients = new Array(tokens.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < tokens.length) {
        const index = next++;
        clients[index] = await openStream(base, tokens[index], orderId);
      }
    }),
  );
  return clients;
}

async function until(what, predicate, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

async function main() {
  const database = await freshDatabase('bench_streams');
  let service;
  try {
    service = await startService(database.url, { SSE_MAX_STREAMS: String(STREAMS), SSE_MAX_STREAMS_PER_USER: String(PER_USER) });
    // One PROCESSING order with its history, written directly: the provider plays no part here.
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    const orderId = randomUUID();
    await db.query(
      `INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email, updated_at)
       VALUES ($1, $2, 'bench', 'PROCESSING', 1000, 'XAF', 1, '237600000006', 'bench', 'Bench', 'bench@example.com', now())`,
      [orderId, `ord_${orderId.replace(/-/g, '')}`],
    );
    await db.query(
      `INSERT INTO order_status_changes (order_id, from_status, to_status, reason) VALUES ($1, 'PENDING', 'PROCESSING', 'bench')`,
      [orderId],
    );
    await db.end();

    const users = STREAMS / PER_USER;
    const tokens = [];
    for (let i = 0; i < users; i++) {
      const token = await bearer(`watcher-${i}`, ['finance']);
      for (let j = 0; j < PER_USER; j++) tokens.push(token);
    }

    // Warm-up: code compiled, pools filled; then the baseline.
    const warm = await openMany(service.url, tokens.slice(0, 200), orderId);
    await until('the warm-up snapshots', () => warm.every((c) => c.snapshot));
    for (const client of warm) client.close();
    await sleep(2_000);
    const baselineStatementsFrom = await service.statements();
    await sleep(IDLE_MS);
    const baselineStatements = (await service.statements()) - baselineStatementsFrom;
    const heapBefore = await service.memory();
    const rssBefore = service.rssBytes();

    const started = Date.now();
    const clients = await openMany(service.url, tokens, orderId);
    const refused = clients.filter((c) => c.status !== 200).length;
    await until('every snapshot', () => clients.every((c) => c.status !== 200 || c.snapshot));
    const openMs = Date.now() - started;
    await sleep(2_000);
    const idleFrom = await service.statements();
    const rssOpen = service.rssBytes();
    await sleep(IDLE_MS);
    const idleStatements = (await service.statements()) - idleFrom;
    const rssIdle = service.rssBytes();
    const heapIdle = await service.memory();
    const rssAfterCollection = service.rssBytes();
    if (idleStatements > 0) console.log('last statements while idle:', await service.recentStatements());

    const growth = rssIdle - rssBefore;
    console.log(`streams open:                ${STREAMS - refused} of ${STREAMS} (refused ${refused}), opened in ${openMs} ms`);
    console.log(`service RSS before:          ${mb(rssBefore)}`);
    console.log(`service RSS, streams open:   ${mb(rssOpen)}`);
    console.log(`service RSS after ${IDLE_MS / 1000} s idle: ${mb(rssIdle)}`);
    console.log(
      `RSS growth:                  ${mb(growth)} (${(growth / STREAMS / 1024).toFixed(1)} KB a stream; goal < 150 MB for 10,000)`,
    );
    console.log(`RSS after a full GC:         ${mb(rssAfterCollection)} (growth ${mb(rssAfterCollection - rssBefore)})`);
    const heapGrowth = heapIdle.heapUsed - heapBefore.heapUsed;
    console.log(
      `heap used after a full GC: ${mb(heapBefore.heapUsed)} → ${mb(heapIdle.heapUsed)} (${(heapGrowth / STREAMS / 1024).toFixed(1)} KB a stream)`,
    );
    console.log(
      `heap total ${mb(heapBefore.heapTotal)} → ${mb(heapIdle.heapTotal)}; external ${mb(heapBefore.external)} → ${mb(heapIdle.external)}`,
    );
    console.log(
      `statements in ${IDLE_MS / 1000} s idle:     ${idleStatements} with the streams, ${baselineStatements} without (scheduled jobs)`,
    );
    for (const client of clients) client.close();
    await sleep(500);
  } finally {
    await service?.stop();
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
