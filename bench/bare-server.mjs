/**
 * The yardstick of `npm run bench`: a bare Fastify + jose + pg server doing the service's work on
 * the service's tables with the fewest moving parts, never shipped and never importing `src/`.
 *
 * - `GET /v1/orders/:id`: the bearer JWT verified (HS256, key imported once), then ONE prepared
 *   statement returns the order, its status history and its callbacks (owner in the WHERE), in the
 *   service's JSON shape.
 * - `POST /v1/orders` (Idempotency-Key required), four prepared statements and no transaction block:
 *   1. the idempotency record claimed;
 *   2. linked to the new order, the order and its first history row inserted (PENDING, notified);
 *   3. one agent-budget slot counted (per-minute counters, rolling hour) and `submitted_at` set;
 *   then the pay-in sent to the provider over HTTP (provider token fetched once and cached);
 *   4. the order moved to its outcome, its history row, the call-log row, the idempotency answer
 *      stored and the change notified.
 * - `POST /minimal/v1/orders`, the minimal write (the yardstick of `POST /v1/orders`): the bearer
 *   verified and the body checked as above, ONE insert of the order claiming its Idempotency-Key
 *   (required; a unique index on (owner, key) of the bare schema, bench/database.mjs
 *   addMinimalWriteKey; a key already used answers 409, no replay), `submitted_at` set, the same
 *   pay-in to the provider, ONE update of the order with the outcome, and the same answer. Two
 *   prepared statements and no transaction block: no idempotency record, no history row, no budget,
 *   no call-log row, no notification.
 *
 * - `GET /v1/orders` (`npm run bench:scale`): a keyset page of 50 through one prepared statement per
 *   set of equality filters, as the service's lists.
 *
 * Environment: BARE_PORT, DATABASE_URL, AUTH_JWT_SECRET, PROVIDER_BASE_URL, PROVIDER_API_KEY,
 * PROVIDER_SECRET_KEY, PUBLIC_BASE_URL, CALLBACK_SIGNING_SECRET, PROVIDER_AGENT_HOURLY_LIMIT.
 */
import { createHash, createHmac, randomUUID, webcrypto } from 'node:crypto';
import http from 'node:http';
import Fastify from 'fastify';
import { jwtVerify } from 'jose';
import pg from 'pg';
import pino from 'pino';
import { addMinimalWriteKey } from './database.mjs';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`bare server: ${name} is required`);
  return value;
};
const config = {
  port: Number(env('BARE_PORT')),
  databaseUrl: env('DATABASE_URL'),
  jwtSecret: env('AUTH_JWT_SECRET'),
  providerBaseUrl: env('PROVIDER_BASE_URL'),
  apiKey: env('PROVIDER_API_KEY'),
  secretKey: env('PROVIDER_SECRET_KEY'),
  publicBaseUrl: env('PUBLIC_BASE_URL'),
  callbackSecret: env('CALLBACK_SIGNING_SECRET'),
  agentHourlyLimit: Number(env('PROVIDER_AGENT_HOURLY_LIMIT')),
};
/** The service's defaults (CURRENCIES, MAX_AMOUNT): minor-unit digits per accepted currency. */
const CURRENCY_DECIMALS = { XAF: 0, XOF: 0, EUR: 2, USD: 2 };
const AMOUNT_PATTERNS = Object.fromEntries(
  Object.entries(CURRENCY_DECIMALS).map(([code, decimals]) => [
    code,
    new RegExp(decimals === 0 ? '^\\d{1,15}$' : `^\\d{1,15}(\\.\\d{1,${decimals}})?$`),
  ]),
);
const MAX_AMOUNT = 100_000_000;
const READ_ALL_ROLES = new Set(['finance', 'admin']);
/** Same pool size as the service (DATABASE_POOL_SIZE). */
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10 });
const hmacKey = await webcrypto.subtle.importKey(
  'raw',
  new TextEncoder().encode(config.jwtSecret),
  { name: 'HMAC', hash: 'SHA-256' },
  false,
  ['verify'],
);
const providerAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });

// The budget in one statement needs a counter table the service does not have (yet): made here, in
// the bench's own throw-away database. Concurrent requests may overshoot the limit by the number in
// flight (each reads the window before adding to it): a bench yardstick, not a budget to copy as is.
await pool.query(`CREATE TABLE IF NOT EXISTS bench_agent_budget (minute timestamptz PRIMARY KEY, used integer NOT NULL)`);
await addMinimalWriteKey(config.databaseUrl);

const SQL = {
  getOrder: `
    SELECT o.id, o.reference, o.status, o.amount::text AS amount, o.currency, o.service, o.wallet, o.description, o.payer,
           o.payer_email, o.provider_reference, o.provider_transaction_reference, o.failure_reason, o.needs_review,
           o.created_at, o.updated_at,
           (SELECT coalesce(json_agg(json_build_object(
                     'fromStatus', c.from_status, 'status', c.to_status, 'reason', c.reason, 'detail', c.detail,
                     'callbackId', c.callback_id, 'actor', CASE WHEN $3 THEN c.actor END, 'note', CASE WHEN $3 THEN c.note END,
                     'at', to_char(c.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY c.id), '[]'::json)
              FROM order_status_changes c WHERE c.order_id = o.id) AS history,
           (SELECT coalesce(json_agg(json_build_object(
                     'id', p.id, 'outcome', p.outcome, 'result', p.result,
                     'receivedAt', to_char(p.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ORDER BY p.received_at), '[]'::json)
              FROM provider_callbacks p WHERE p.order_id = o.id) AS callbacks
    FROM orders o
    WHERE o.id = $1 AND (o.customer_id = $2 OR $3)`,
  claimKey: `
    INSERT INTO idempotency_records (id, user_id, scope, key, request_hash, state, created_at, expires_at, lease_until)
    VALUES ($1, $2, 'orders.create', $3, $4, 'in_progress', now(), now() + interval '24 hours', now() + interval '20 seconds')
    ON CONFLICT (user_id, scope, key) DO NOTHING
    RETURNING id`,
  findKey: `
    SELECT request_hash, state, response_status, response_body #>> '{}' AS response_text FROM idempotency_records
    WHERE user_id = $1 AND scope = 'orders.create' AND key = $2 AND expires_at > now()`,
  insertOrder: `
    WITH link AS (
      UPDATE idempotency_records SET resource_type = 'order', resource_id = $1
      WHERE id = $2 AND state = 'in_progress' RETURNING id),
    created AS (
      INSERT INTO orders (id, reference, customer_id, amount, currency, service, wallet, description, payer, payer_email)
      SELECT $1, $3, $4, $5, $6, $7, $8, $9, $10, $11 FROM link
      RETURNING id, created_at),
    change AS (
      INSERT INTO order_status_changes (order_id, from_status, to_status, reason, detail)
      SELECT id, NULL, 'PENDING', 'created', 'Order stored, not yet sent to the provider' FROM created
      RETURNING id, order_id, at)
    SELECT created.created_at,
           pg_notify('bench_order_status', json_build_object('orderId', change.order_id, 'changeId', change.id::text,
             'fromStatus', NULL, 'status', 'PENDING', 'reason', 'created', 'at', change.at)::text) AS notified
    FROM created, change`,
  takeBudgetSlot: `
    WITH window_used AS (
      SELECT coalesce(sum(used), 0) AS used FROM bench_agent_budget WHERE minute > now() - interval '1 hour'),
    slot AS (
      INSERT INTO bench_agent_budget (minute, used) SELECT date_trunc('minute', now()), 1 FROM window_used WHERE used < $2
      ON CONFLICT (minute) DO UPDATE SET used = bench_agent_budget.used + 1
      RETURNING used),
    submitted AS (
      UPDATE orders SET submitted_at = now() WHERE id = $1 AND EXISTS (SELECT 1 FROM slot) RETURNING id)
    SELECT (SELECT count(*) FROM submitted)::int AS granted`,
  recordOutcome: `
    WITH moved AS (
      UPDATE orders SET status = $2::"OrderStatus", provider_reference = coalesce(provider_reference, $3),
             provider_transaction_reference = coalesce(provider_transaction_reference, $4), failure_reason = $5,
             processing_since = CASE WHEN $2 = 'PROCESSING' THEN $6::timestamptz END, updated_at = $6
      WHERE id = $1 AND status = 'PENDING'
      RETURNING id),
    change AS (
      INSERT INTO order_status_changes (order_id, from_status, to_status, reason, detail)
      SELECT id, 'PENDING', $2::"OrderStatus", $7, $8 FROM moved
      RETURNING id, order_id, at),
    call_log AS (
      INSERT INTO provider_calls (id, area, method, endpoint, url, http_status, outcome, error_code, duration_ms, request_id,
                                  request_body, response_body)
      VALUES (gen_random_uuid(), 'payin', 'POST', 'payin.collect', $9, $10, $11, $12, $13, $14, $15, $16)),
    answered AS (
      UPDATE idempotency_records SET state = 'completed', response_status = $17, response_body = to_jsonb($18::text),
             completed_at = now(), lease_until = NULL
      WHERE id = $19 AND state = 'in_progress' AND EXISTS (SELECT 1 FROM moved))
    SELECT pg_notify('bench_order_status', json_build_object('orderId', change.order_id, 'changeId', change.id::text,
             'fromStatus', 'PENDING', 'status', $2, 'reason', $7, 'at', change.at)::text) AS notified
    FROM change`,
  minimalInsert: `
    INSERT INTO orders (id, reference, customer_id, amount, currency, service, wallet, description, payer, payer_email,
                        submitted_at, bench_idempotency_key)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now(), $11)
    ON CONFLICT (customer_id, bench_idempotency_key) WHERE bench_idempotency_key IS NOT NULL DO NOTHING
    RETURNING created_at`,
  minimalOutcome: `
    UPDATE orders SET status = $2::"OrderStatus", provider_reference = $3, provider_transaction_reference = $4,
           failure_reason = $5, processing_since = CASE WHEN $2 = 'PROCESSING' THEN $6::timestamptz END, updated_at = $6
    WHERE id = $1 AND status = 'PENDING'`,
  releaseNotSent: `
    WITH failed AS (
      UPDATE orders SET status = 'FAILED', failure_reason = $2, updated_at = now() WHERE id = $1 AND status = 'PENDING' RETURNING id),
    change AS (
      INSERT INTO order_status_changes (order_id, from_status, to_status, reason, detail)
      SELECT id, 'PENDING', 'FAILED', 'provider_rejected', $2 FROM failed RETURNING id)
    DELETE FROM idempotency_records WHERE id = $3 AND state = 'in_progress'`,
};

/** A prepared statement: parsed and planned once per connection. */
const run = (name, values) => pool.query({ name, text: SQL[name], values });

class HttpProblem extends Error {
  constructor(status, code, detail) {
    super(detail);
    this.status = status;
    this.code = code;
  }
}

async function authenticate(request) {
  const header = request.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) throw new HttpProblem(401, 'unauthenticated', 'Missing bearer token');
  try {
    const { payload } = await jwtVerify(header.slice(7), hmacKey, {
      algorithms: ['HS256'],
      clockTolerance: 30,
      requiredClaims: ['sub', 'exp'],
    });
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new Error('sub');
    const roles = Array.isArray(payload.roles) && payload.roles.length > 0 ? payload.roles : ['customer'];
    return { id: payload.sub, roles, readsAll: roles.some((role) => READ_ALL_ROLES.has(role)) };
  } catch {
    throw new HttpProblem(401, 'unauthenticated', 'The bearer token is invalid');
  }
}

/** The stored decimal (numeric(24,4) as text) with the currency's digits, as the service answers it. */
function amountText(stored, currency) {
  const decimals = CURRENCY_DECIMALS[currency] ?? 4;
  const [whole, fraction = ''] = stored.split('.');
  return decimals === 0 ? whole : `${whole}.${fraction.padEnd(decimals, '0').slice(0, decimals)}`;
}

function orderDto(row) {
  return {
    id: row.id,
    reference: row.reference,
    status: row.status,
    amount: amountText(row.amount, row.currency),
    currency: row.currency,
    service: row.service,
    wallet: row.wallet,
    description: row.description,
    payer: row.payer,
    payerEmail: row.payer_email,
    providerReference: row.provider_reference,
    providerTransactionReference: row.provider_transaction_reference,
    failureReason: row.failure_reason,
    needsReview: row.needs_review,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The service's request fingerprint: scope, method, route, params and the body with sorted keys. */
function requestHash(body) {
  const sorted = Object.fromEntries(
    Object.keys(body)
      .sort()
      .map((name) => [name, body[name]]),
  );
  return createHash('sha256')
    .update(JSON.stringify(['orders.create', 'POST', '/v1/orders', {}, sorted]))
    .digest('hex');
}

function callbackUrl(orderId, outcome) {
  const token = createHmac('sha256', config.callbackSecret).update(`payin-callback:v1:${orderId}:${outcome}`).digest('base64url');
  return `${config.publicBaseUrl}/v1/callbacks/payin/${orderId}/${outcome}?token=${token}`;
}

function providerRequest(path, headers, body) {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${config.providerBaseUrl}${path}`,
      {
        method: 'POST',
        agent: providerAgent,
        timeout: 15_000,
        headers: {
          accept: 'application/json',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...headers,
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
    request.end(payload);
  });
}

let providerToken;
async function bearerToken(refresh = false) {
  if (!refresh && providerToken && providerToken.expiresAt - Date.now() > 5 * 60_000) return providerToken.token;
  const answer = await providerRequest('/api/action/auth', {}, { public_apikey: config.apiKey, private_secretkey: config.secretKey });
  const body = JSON.parse(answer.text);
  providerToken = { token: body.token, expiresAt: new Date(body.data.expireAt).getTime() };
  return providerToken.token;
}

async function sendPayIn(body, service) {
  const headers = (token) => ({ authorization: `Bearer ${token}`, 'x-api-key': config.apiKey, operation: '2', service: String(service) });
  let answer = await providerRequest('/api/agent/bills/v3', headers(await bearerToken()), body);
  if (answer.status === 401) answer = await providerRequest('/api/agent/bills/v3', headers(await bearerToken(true)), body);
  return answer;
}

// One JSON log line per request, like a production service keeps.
const log = pino({ level: 'info' });
const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
app.addHook('onResponse', (request, reply, done) => {
  log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime }, 'request');
  done();
});
app.setErrorHandler((error, _request, reply) => {
  if (error instanceof HttpProblem) return reply.code(error.status).send({ status: error.status, code: error.code, detail: error.message });
  if (error.validation) return reply.code(400).send({ status: 400, code: 'validation_failed', detail: error.message });
  log.error({ err: error }, 'request failed');
  return reply.code(500).send({ status: 500, code: 'internal_error' });
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
app.get('/v1/orders/:id', async (request) => {
  const user = await authenticate(request);
  const { id } = request.params;
  const { rows } = UUID.test(id) ? await run('getOrder', [id, user.id, user.readsAll]) : { rows: [] };
  if (rows.length === 0) throw new HttpProblem(404, 'not_found', `No order ${id}.`);
  const [row] = rows;
  return { ...orderDto(row), history: row.history, callbacks: row.callbacks };
});

/**
 * The list's equality filters in the service's parameter order ($6 on), and one prepared statement
 * per set of them, as the service keeps (a generic plan then scans the filter's own index).
 */
const LIST_FILTERS = [
  ['customerId', 'customer_id', 'text'],
  ['status', 'status', '"OrderStatus"'],
  ['currency', 'currency', 'text'],
  ['needsReview', 'needs_review', 'boolean'],
];
const LIST_TIME = (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
function listStatement(filter) {
  const used = LIST_FILTERS.filter(([field]) => filter[field] !== undefined);
  const conditions = used.map(([, column, type], i) => ` AND o.${column} = $${6 + i}::${type}`).join('');
  return {
    name: `bare_list_${used.map(([field]) => field).join('_') || 'all'}`,
    text: `
      SELECT o.id::text AS id, o.reference, o.status::text AS status, trim_scale(o.amount)::text AS amount, o.currency, o.service,
        o.wallet, o.description, o.payer, o.payer_email AS "payerEmail", o.provider_reference AS "providerReference",
        o.provider_transaction_reference AS "providerTransactionReference", o.failure_reason AS "failureReason",
        o.needs_review AS "needsReview", ${LIST_TIME('o.created_at')} AS "createdAt", ${LIST_TIME('o.updated_at')} AS "updatedAt"
      FROM orders o
      WHERE o.created_at >= $1::timestamptz AND o.created_at < $2::timestamptz
        AND o.created_at <= $3::timestamptz AND (o.created_at, o.id) < ($3::timestamptz, $4::uuid)${conditions}
      ORDER BY o.created_at DESC, o.id DESC
      LIMIT $5::int`,
    values: used.map(([field]) => filter[field]),
  };
}

/**
 * `GET /v1/orders`, for `npm run bench:scale`: the bearer verified, the caller's own orders unless
 * finance or admin, the equality filters and the `from`/`to` window, a keyset page of 50 (the
 * cursor as the service writes it), in the service's item shape.
 */
app.get('/v1/orders', async (request) => {
  const user = await authenticate(request);
  const query = request.query;
  const filter = {
    customerId: user.readsAll ? query.customerId : user.id,
    status: query.status,
    currency: query.currency,
    needsReview: query.needsReview === undefined ? undefined : query.needsReview === 'true',
  };
  const [at, id] = query.cursor
    ? Buffer.from(query.cursor, 'base64url').toString('utf8').split('|')
    : ['infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff'];
  if (!UUID.test(id)) throw new HttpProblem(400, 'validation_failed', 'cursor is not one this API returned');
  const limit = 50;
  const statement = listStatement(filter);
  const { rows } = await pool.query({
    name: statement.name,
    text: statement.text,
    values: [query.from ?? '-infinity', query.to ?? 'infinity', at, id, limit + 1, ...statement.values],
  });
  const items = rows.slice(0, limit).map((row) => ({ ...row, amount: amountText(row.amount, row.currency) }));
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit ? Buffer.from(`${last.createdAt}|${last.id}`).toString('base64url') : null };
});

const createOrderSchema = {
  body: {
    type: 'object',
    required: ['amount', 'currency', 'wallet', 'service', 'description', 'payer', 'payerEmail'],
    properties: {
      amount: { anyOf: [{ type: 'string' }, { type: 'number' }] },
      currency: { type: 'string', enum: Object.keys(CURRENCY_DECIMALS) },
      wallet: { type: 'string', pattern: '^\\d{6,20}$' },
      service: { type: 'integer', minimum: 0, maximum: 2147483647 },
      description: { type: 'string', minLength: 1, maxLength: 255 },
      payer: { type: 'string', minLength: 1, maxLength: 120 },
      payerEmail: { type: 'string', pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', maxLength: 254 },
      otp: { type: 'string', pattern: '^\\d{4,8}$' },
    },
  },
};

/** The amount as text, checked against the currency's digits and the maximum, as the service checks it. */
function checkedAmount(body) {
  const amount = String(body.amount);
  if (!AMOUNT_PATTERNS[body.currency].test(amount) || !(Number(amount) > 0)) {
    throw new HttpProblem(400, 'validation_failed', 'amount must be a positive decimal with the currency’s digits');
  }
  if (Number(amount) > MAX_AMOUNT) throw new HttpProblem(400, 'validation_failed', 'amount is too large');
  return amount;
}

function newOrder(body, amount) {
  return {
    id: randomUUID(),
    reference: `ord_${randomUUID().replace(/-/g, '')}`,
    amount,
    currency: body.currency,
    service: body.service,
    wallet: body.wallet,
    description: body.description,
    payer: body.payer,
    payerEmail: body.payerEmail,
  };
}

/** The pay-in as the service sends it (`PayinClient.collect`): the order's fields and the two signed callback URLs. */
function payInFor(order) {
  return {
    wallet: order.wallet,
    amount: Number(order.amount),
    currency: order.currency,
    order_id: order.reference,
    description: order.description,
    payer: order.payer,
    payerEmail: order.payerEmail,
    successUrl: callbackUrl(order.id, 'success'),
    failureUrl: callbackUrl(order.id, 'failure'),
  };
}

/** The pay-in sent and its answer read: the order's next status, and the answer the client gets. */
async function payInOutcome(order, payIn, createdAt) {
  const started = performance.now();
  let answer;
  let envelope;
  let errorCode = null;
  try {
    answer = await sendPayIn(payIn, order.service);
    envelope = JSON.parse(answer.text);
  } catch (error) {
    errorCode = answer ? 'provider_bad_response' : `provider_${error instanceof Error ? error.message : 'failure'}`;
  }
  const durationMs = Math.round(performance.now() - started);
  const accepted = answer?.status === 200 && envelope?.success === true && envelope.status === 'PROCESSING';
  const refused = !accepted && answer !== undefined && answer.status >= 400 && answer.status < 500;
  const status = accepted ? 'PROCESSING' : refused ? 'FAILED' : 'UNKNOWN';
  const failureReason = refused ? String(envelope?.message ?? 'Rejected by the payment provider') : null;
  const detail = accepted ? String(envelope.message ?? 'Accepted by the provider') : (failureReason ?? 'The provider’s answer was lost');
  const reason = { PROCESSING: 'provider_accepted', FAILED: 'provider_rejected', UNKNOWN: 'provider_outcome_unknown' }[status];
  const now = new Date();
  const dto = {
    id: order.id,
    reference: order.reference,
    status,
    amount: amountText(order.amount, order.currency),
    currency: order.currency,
    service: order.service,
    wallet: order.wallet,
    description: order.description,
    payer: order.payer,
    payerEmail: order.payerEmail,
    providerReference: envelope?.data?.reference ?? null,
    providerTransactionReference: envelope?.data?.transaction_reference ?? null,
    failureReason,
    needsReview: false,
    createdAt: createdAt.toISOString(),
    updatedAt: now.toISOString(),
  };
  return { answer, envelope, errorCode, durationMs, status, failureReason, detail, reason, now, dto };
}

function idempotencyKey(request) {
  const key = request.headers['idempotency-key'];
  if (typeof key !== 'string' || !/^[\x20-\x7e]{1,255}$/.test(key)) {
    throw new HttpProblem(400, 'idempotency_key_required', 'Send an Idempotency-Key header');
  }
  return key;
}

app.post('/v1/orders', { schema: createOrderSchema }, async (request, reply) => {
  const user = await authenticate(request);
  const key = idempotencyKey(request);
  const body = request.body;
  const amount = checkedAmount(body);
  const hash = requestHash(body);

  const recordId = randomUUID();
  const claimed = await run('claimKey', [recordId, user.id, key, hash]);
  if (claimed.rowCount === 0) {
    const { rows } = await run('findKey', [user.id, key]);
    const held = rows[0];
    if (!held || held.state !== 'completed') throw new HttpProblem(409, 'idempotency_in_progress', 'A request with this key is running');
    if (held.request_hash !== hash) throw new HttpProblem(422, 'idempotency_key_reused', 'This key was used for another request');
    return reply.code(held.response_status).header('idempotent-replayed', 'true').type('application/json').send(held.response_text);
  }

  const order = newOrder(body, amount);
  const inserted = await run('insertOrder', [
    order.id,
    recordId,
    order.reference,
    user.id,
    amount,
    order.currency,
    order.service,
    order.wallet,
    order.description,
    order.payer,
    order.payerEmail,
  ]);
  if (inserted.rowCount === 0) throw new HttpProblem(409, 'idempotency_in_progress', 'The idempotency record was taken over');
  const createdAt = inserted.rows[0].created_at;

  const budget = await run('takeBudgetSlot', [order.id, config.agentHourlyLimit]);
  if (budget.rows[0].granted !== 1) {
    await run('releaseNotSent', [order.id, 'Not sent to the payment provider (provider_budget_exhausted)', recordId]);
    throw new HttpProblem(429, 'provider_budget_exhausted', 'The hourly provider budget is spent');
  }

  const payIn = payInFor(order);
  const outcome = await payInOutcome(order, payIn, createdAt);
  const { answer, envelope, errorCode, dto } = outcome;
  const answerText = JSON.stringify(dto);
  await run('recordOutcome', [
    order.id,
    outcome.status,
    dto.providerReference,
    dto.providerTransactionReference,
    outcome.failureReason,
    outcome.now,
    outcome.reason,
    outcome.detail,
    `${config.providerBaseUrl}/api/agent/bills/v3`,
    answer?.status ?? null,
    errorCode ?? (answer && answer.status < 400 ? 'answered' : `http_${answer?.status}`),
    errorCode,
    outcome.durationMs,
    request.id,
    JSON.stringify({ ...payIn, successUrl: '[redacted]', failureUrl: '[redacted]' }),
    envelope === undefined ? null : JSON.stringify(envelope),
    201,
    answerText,
    recordId,
  ]);
  return reply.code(201).type('application/json').send(answerText);
});

/**
 * The minimal write: what a pay-in cannot do without. The token, the key and the body checked, the
 * order inserted under its key, the pay-in sent, the order updated with the outcome: two statements,
 * no transaction.
 */
app.post('/minimal/v1/orders', { schema: createOrderSchema }, async (request, reply) => {
  const user = await authenticate(request);
  const key = idempotencyKey(request);
  const body = request.body;
  const order = newOrder(body, checkedAmount(body));
  const inserted = await run('minimalInsert', [
    order.id,
    order.reference,
    user.id,
    order.amount,
    order.currency,
    order.service,
    order.wallet,
    order.description,
    order.payer,
    order.payerEmail,
    key,
  ]);
  if (inserted.rowCount === 0) throw new HttpProblem(409, 'idempotency_key_reused', 'This key was already used');
  const outcome = await payInOutcome(order, payInFor(order), inserted.rows[0].created_at);
  const { dto } = outcome;
  await run('minimalOutcome', [
    order.id,
    outcome.status,
    dto.providerReference,
    dto.providerTransactionReference,
    outcome.failureReason,
    outcome.now,
  ]);
  return reply.code(201).type('application/json').send(JSON.stringify(dto));
});

app.get('/health/live', () => ({ status: 'ok' }));

const close = () => {
  app.close().then(
    () => pool.end().then(() => process.exit(0)),
    () => process.exit(1),
  );
};
process.on('SIGTERM', close);
process.on('SIGINT', close);
await app.listen({ port: config.port, host: '127.0.0.1' });
