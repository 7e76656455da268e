/** The bench's own database: created fresh on the server of BENCH_DATABASE_URL, seeded, dropped. */
import { spawnSync } from 'node:child_process';
import pg from 'pg';

export function databaseUrlFor(serverUrl, database) {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * `npm run db:migrate` on `databaseUrl`, as production migrates: a process of its own, before the
 * service starts (see docs/operations.md, "Production run"). `stdio` as spawn's.
 */
export function migrateDatabase(root, databaseUrl, stdio = 'inherit') {
  const migrated = spawnSync('npm', ['run', '-s', 'db:migrate'], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'development', DATABASE_URL: databaseUrl },
    stdio,
  });
  if (migrated.status !== 0) throw new Error('npm run db:migrate failed');
}

async function withClient(url, work) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * The bare schema's one addition for the minimal write (bench/bare-server.mjs): the order row carries
 * its Idempotency-Key under a unique index per owner. Partial, so the service's own orders (no key)
 * add no index entry; added before any server starts (a column added under a running service would
 * change the rows of its prepared `RETURNING o.*`), and a no-op when present.
 */
export async function addMinimalWriteKey(url) {
  await withClient(url, async (client) => {
    const { rowCount } = await client.query(
      `SELECT 1 FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'bench_idempotency_key'`,
    );
    if (rowCount > 0) return;
    await client.query(`ALTER TABLE orders ADD COLUMN IF NOT EXISTS bench_idempotency_key text`);
    await client.query(
      `CREATE UNIQUE INDEX IF NOT EXISTS orders_bench_idempotency_key ON orders (customer_id, bench_idempotency_key)
       WHERE bench_idempotency_key IS NOT NULL`,
    );
  });
}

export async function createDatabase(serverUrl, database) {
  await withClient(serverUrl, (client) => client.query(`CREATE DATABASE "${database}"`));
}

export async function dropDatabase(serverUrl, database) {
  await withClient(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
}

/**
 * Orders for the GET to read: `owned` orders of `customerId`, each decided by a callback (three
 * history rows, one callback), among `others` orders of other customers. Returns the owned ids.
 * The rows are the same on every database seeded with the same `seededAt` (ids from md5 of the
 * row's number): a baseline built from another commit reads the same orders from a database of its
 * own, migrated by its own migrations.
 */
export async function seedOrders(url, { customerId, owned, others, seededAt }) {
  return withClient(url, async (client) => {
    await client.query(
      `INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email,
                           provider_reference, provider_transaction_reference, submitted_at, processing_since, created_at, updated_at)
       SELECT md5('seed-order-' || n)::uuid, 'ord_seed_' || n, 'customer-' || (n % 500), 'SUCCEEDED', 2500, 'XAF', 1, '237600000001',
              'Seeded order', 'Payer ' || n, 'payer' || n || '@example.com', 'SP' || lpad(n::text, 14, '0'), 'TR' || lpad(n::text, 12, '0'),
              $2::timestamptz - make_interval(mins => n), $2::timestamptz - make_interval(mins => n),
              $2::timestamptz - make_interval(mins => n), $2::timestamptz
       FROM generate_series(1, $1) AS n`,
      [others, seededAt],
    );
    const { rows } = await client.query(
      `INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email,
                           provider_reference, provider_transaction_reference, submitted_at, processing_since, created_at, updated_at)
       SELECT md5('bench-order-' || n)::uuid, 'ord_bench_' || n, $1, 'SUCCEEDED', 1500, 'XAF', 1, '237600000001', 'Bench order ' || n,
              'Bench Payer', 'bench@example.com', 'SP' || lpad(n::text, 14, '9'), 'TR' || lpad(n::text, 12, '9'),
              $3::timestamptz - make_interval(secs => n), $3::timestamptz - make_interval(secs => n),
              $3::timestamptz - make_interval(secs => n), $3::timestamptz
       FROM generate_series(1, $2) AS n
       ORDER BY n
       RETURNING id`,
      [customerId, owned, seededAt],
    );
    const ids = rows.map((row) => row.id);
    await client.query(
      `WITH callbacks AS (
         INSERT INTO provider_callbacks (id, order_id, path_order_id, outcome, result, method, query, headers, content_type, raw_body,
                                         received_at)
         SELECT md5('bench-callback-' || id)::uuid, id, id::text, 'success', 'APPLIED', 'POST', '{}', '{"content-type":"application/json"}',
                'application/json', '{"status":"SUCCESS"}', $2::timestamptz
         FROM unnest($1::uuid[]) AS id
         RETURNING id, order_id)
       INSERT INTO order_status_changes (order_id, from_status, to_status, reason, detail, callback_id, at)
       SELECT order_id, step.from_status::"OrderStatus", step.to_status::"OrderStatus", step.reason, step.detail,
              CASE WHEN step.to_status = 'SUCCEEDED' THEN callbacks.id END, $2::timestamptz + make_interval(secs => step.position)
       FROM callbacks
       CROSS JOIN (VALUES (1, NULL, 'PENDING', 'created', 'Order stored, not yet sent to the provider'),
                          (2, 'PENDING', 'PROCESSING', 'provider_accepted', 'Transaction is processing'),
                          (3, 'PROCESSING', 'SUCCEEDED', 'callback_success', 'Decided by the provider callback'))
                  AS step(position, from_status, to_status, reason, detail)
       ORDER BY callbacks.order_id, step.position`,
      [ids, seededAt],
    );
    await client.query('ANALYZE');
    return ids;
  });
}
