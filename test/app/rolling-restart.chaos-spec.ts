import { randomUUID } from 'node:crypto';
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { mintToken } from '../../src/auth/token-minter';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { startChildService, type ChildService } from '../support/child-service';
import { orderRequest } from '../support/provider-factories';
import { testDatabaseUrl } from '../support/test-database';
import { startTestSandbox } from '../support/test-service';

const JWT_SECRET = 'rolling-restart-jwt-secret-0123456789abcdefghij';
const INSTANCES = 3;
/** Long enough for the proxy to see /health/ready fail a few times over. */
const DRAIN_MS = 1_500;
/** How often the proxy asks each instance whether it is ready, as a load balancer does. */
const READINESS_INTERVAL_MS = 150;
/**
 * Failed checks in a row that take an instance out of rotation (one success puts it back), as a
 * load balancer's unhealthy threshold: one slow answer from a busy instance is not a verdict.
 */
const UNHEALTHY_THRESHOLD = 2;
/** The sandbox calls back this long after a pay-in: streams are open while instances restart. */
const CALLBACK_DELAY_MS = 2_500;
const CLIENTS = 4;
const FINAL = new Set(['SUCCEEDED', 'FAILED']);

interface Upstream {
  child: ChildService;
  port: number;
  ready: boolean;
  /** Failed readiness checks in a row. */
  failures: number;
  agent: Agent;
}

/**
 * A small load balancer: forwards HTTP to the instances in rotation, round-robin, over keep-alive
 * connections. /health/ready is asked every READINESS_INTERVAL_MS: a 200 puts an instance in
 * rotation, UNHEALTHY_THRESHOLD failures in a row (503, or no answer within 1 s) take it out. A request
 * that could not reach an instance (connection refused: nothing was sent) goes to the next one;
 * anything else that fails on the way is a 502. Every status it answers is counted.
 */
class RoundRobinProxy {
  readonly upstreams: Upstream[] = [];
  readonly answered = new Map<number, number>();
  readonly serverErrors: string[] = [];
  private next = 0;
  private server?: Server;
  private checker?: NodeJS.Timeout;

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.forward(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.checker = setInterval(() => void this.checkReadiness(), READINESS_INTERVAL_MS);
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  add(child: ChildService) {
    this.upstreams.push({
      child,
      port: Number(new URL(child.base).port),
      ready: false,
      failures: UNHEALTHY_THRESHOLD,
      agent: new Agent({ keepAlive: true }),
    });
  }

  remove(child: ChildService) {
    const index = this.upstreams.findIndex((u) => u.child === child);
    const [gone] = this.upstreams.splice(index, 1);
    gone.agent.destroy();
  }

  async untilReady(child: ChildService) {
    while (!this.upstreams.find((u) => u.child === child)?.ready) await sleep(50);
  }

  async close() {
    clearInterval(this.checker);
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
    for (const upstream of this.upstreams) upstream.agent.destroy();
  }

  private async checkReadiness() {
    await Promise.all(
      this.upstreams.map(async (upstream) => {
        const ok = await fetch(`http://127.0.0.1:${upstream.port}/health/ready`, { signal: AbortSignal.timeout(1_000) }).then(
          async (res) => (await res.arrayBuffer(), res.status === 200),
          () => false,
        );
        upstream.failures = ok ? 0 : upstream.failures + 1;
        upstream.ready = upstream.failures < UNHEALTHY_THRESHOLD;
      }),
    );
  }

  private async forward(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const answer = (status: number, text: string) => {
      this.count(status, `${req.method} ${req.url}: ${text}`);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(text);
    };
    for (let tries = 0; tries < 100; tries++) {
      const ready = this.upstreams.filter((u) => u.ready);
      if (ready.length === 0) {
        await sleep(100);
        continue;
      }
      const upstream = ready[this.next++ % ready.length];
      const outcome = await new Promise<'sent' | 'refused' | Error>((resolve) => {
        const upstreamReq = httpRequest(
          { host: '127.0.0.1', port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent: upstream.agent },
          (upstreamRes) => {
            this.count(upstreamRes.statusCode ?? 0, `${req.method} ${req.url}`);
            res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
            upstreamRes.pipe(res);
            upstreamRes.on('error', () => res.destroy());
            res.on('close', () => upstreamRes.destroy());
            resolve('sent');
          },
        );
        upstreamReq.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED' ? 'refused' : error));
        upstreamReq.end(body);
      });
      if (outcome === 'sent') return;
      if (outcome === 'refused') continue;
      if (!res.headersSent) return answer(502, `upstream failed: ${outcome.message}`);
      res.destroy();
      return;
    }
    answer(503, 'no instance ready');
  }

  private count(status: number, what: string) {
    this.answered.set(status, (this.answered.get(status) ?? 0) + 1);
    if (status >= 500) this.serverErrors.push(`${status} ${what}`);
  }
}

/** One connection of a stream: its events, the `retry:` it was given, how it ended. */
interface StreamEvent {
  id: string;
  status: string;
}
interface ConnectionResult {
  status: number;
  events: StreamEvent[];
  retryMs?: number;
}

function readStream(base: string, token: string, orderId: string, lastEventId: string | undefined): Promise<ConnectionResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
    if (lastEventId) headers['last-event-id'] = lastEventId;
    httpRequest(`${base}/v1/orders/${orderId}/events`, { agent: false, headers }, (res) => {
      res.setEncoding('utf8');
      let text = '';
      res.on('data', (chunk: string) => (text += chunk));
      res.on('close', () => {
        const result: ConnectionResult = { status: res.statusCode ?? 0, events: [] };
        for (const block of text.split('\n\n')) {
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            const colon = line.indexOf(':');
            if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
          }
          if (fields.has('retry')) result.retryMs = Number(fields.get('retry'));
          if (fields.get('event') === 'status')
            result.events.push({ id: fields.get('id')!, status: (JSON.parse(fields.get('data')!) as { status: string }).status });
        }
        resolve(result);
      });
    })
      .on('error', reject)
      .end();
  });
}

/** What a stream client saw of one order, across its reconnections. */
interface FollowedOrder {
  events: StreamEvent[];
  reconnections: number;
  /** Connections that ended before the final status without a `retry:`, or failed: there should be none. */
  abrupt: string[];
}

/**
 * A frontend following an order as EventSource does: on an end without the final status it waits
 * the `retry:` it was given, then reconnects through the load balancer with Last-Event-ID.
 */
async function followOrder(base: string, token: string, orderId: string): Promise<FollowedOrder> {
  const followed: FollowedOrder = { events: [], reconnections: 0, abrupt: [] };
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    const lastEventId = followed.events.at(-1)?.id;
    let connection: ConnectionResult;
    try {
      connection = await readStream(base, token, orderId, lastEventId);
    } catch (error) {
      followed.abrupt.push(`connection failed: ${(error as Error).message}`);
      await sleep(1_000);
      continue;
    }
    if (connection.status !== 200) followed.abrupt.push(`answered ${connection.status}`);
    followed.events.push(...connection.events);
    if (FINAL.has(followed.events.at(-1)?.status ?? '')) return followed;
    if (connection.retryMs === undefined) followed.abrupt.push('ended without retry:');
    followed.reconnections++;
    await sleep(connection.retryMs ?? 1_000);
  }
  followed.abrupt.push('never reached a final status');
  return followed;
}

/**
 * A rolling restart under load: three instances (the real entry point, as child processes) behind
 * a round-robin proxy that follows /health/ready, restarted one by one (SIGTERM, wait for the
 * exit, start again) while clients create orders (retrying with the same Idempotency-Key when a
 * connection fails) and follow each one's live stream (reconnecting with Last-Event-ID after
 * `retry:`). No answer is a 5xx; every order reaches its final status exactly once, with exactly
 * one pay-in at the sandbox; every stream sees every status event of its order, in order, once.
 */
describe('rolling restart', () => {
  let sandbox: RunningSandbox;
  let proxy: RoundRobinProxy;
  let db: Client;
  const children: ChildService[] = [];

  beforeAll(async () => {
    sandbox = await startTestSandbox({ callbackDelayMs: CALLBACK_DELAY_MS, agentHourlyLimit: 1_000_000 });
  });
  afterAll(async () => {
    for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await proxy?.close();
    await db?.end();
    await sandbox?.close();
  });

  it('drops no request, no pay-in and no stream event while every instance is restarted', async () => {
    const began = Date.now();
    proxy = new RoundRobinProxy();
    const base = await proxy.start();
    const start = async () => {
      const child = await startChildService(
        {
          DATABASE_URL: testDatabaseUrl(),
          PROVIDER_BASE_URL: sandbox.url,
          // The sandbox calls back through the load balancer, as the provider would.
          PUBLIC_BASE_URL: base,
          AUTH_JWT_SECRET: JWT_SECRET,
          CALLBACK_SIGNING_SECRET: 'test-callback-signing-secret-0123456789abcdef',
          SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
          PROVIDER_AGENT_HOURLY_LIMIT: '1000000',
          PROVIDER_CUSTOMER_HOURLY_LIMIT: '1000000',
          PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000',
          SSE_MAX_STREAMS_PER_USER: '10000',
          LOG_LEVEL: 'warn',
        },
        // Generous: the machine may be busy.
        { readyPath: '/health/ready', startTimeoutMs: 240_000 },
      );
      children.push(child);
      proxy.add(child);
      await proxy.untilReady(child);
      return child;
    };
    // One after the other: the embedded database serves one starting instance at a time.
    let running: ChildService[] = [];
    for (let i = 0; i < INSTANCES; i++) running.push(await start());
    const started = Date.now();

    const tokens = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) =>
        mintToken({ sub: `cust_rolling_${i}`, roles: ['customer'], ttl: '1h', secret: JWT_SECRET }),
      ),
    );
    const created: { key: string; orderId: string; wallet: string }[] = [];
    const clientErrors: string[] = [];
    const followers: Promise<FollowedOrder & { orderId: string }>[] = [];
    let connectionRetries = 0;
    let loadRunning = true;

    /** POST /v1/orders as a careful client: the same Idempotency-Key again after a connection error. */
    const createOrder = async (token: string) => {
      const key = randomUUID();
      const wallet = Math.random() < 0.75 ? TEST_WALLETS.SUCCESS : TEST_WALLETS.FAILURE;
      const body = JSON.stringify(orderRequest({ wallet }));
      for (let attempt = 0; attempt < 10; attempt++) {
        let res: Response;
        try {
          res = await fetch(`${base}/v1/orders`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'idempotency-key': key, 'content-type': 'application/json' },
            body,
          });
        } catch {
          connectionRetries++;
          await sleep(200);
          continue;
        }
        const text = await res.text();
        let answer: { id?: string; code?: string } = {};
        try {
          answer = JSON.parse(text) as typeof answer;
        } catch {
          // Not the service's answer: the proxy's own, reported below.
        }
        if (res.status === 409 && answer.code === 'idempotency_in_progress') {
          await sleep(200);
          continue;
        }
        if (res.status !== 201 || !answer.id) {
          clientErrors.push(`POST /v1/orders answered ${res.status}: ${text}`);
          return;
        }
        created.push({ key, orderId: answer.id, wallet });
        followers.push(followOrder(base, token, answer.id).then((followed) => ({ ...followed, orderId: answer.id! })));
        return;
      }
      clientErrors.push(`POST /v1/orders with key ${key} never answered`);
    };
    const load = Promise.all(
      tokens.map(async (token) => {
        while (loadRunning) {
          await createOrder(token);
          await sleep(150);
        }
      }),
    );

    // Let streams open on every instance, then restart each in turn, waiting for the new one to be in rotation.
    await sleep(CALLBACK_DELAY_MS);
    const restarts: string[] = [];
    for (let i = 0; i < INSTANCES; i++) {
      const old = running[i];
      const stopping = Date.now();
      old.child.kill('SIGTERM');
      const exit = await old.exited;
      expect(exit).toEqual({ code: 0, signal: null });
      proxy.remove(old);
      const stoppedIn = Date.now() - stopping;
      const replacement = await start();
      running = running.map((child) => (child === old ? replacement : child));
      restarts.push(`instance ${i + 1}: stopped in ${stoppedIn} ms, replaced in ${Date.now() - stopping} ms`);
      // Streams are open on the replacement before the next instance goes.
      await sleep(1_000);
    }
    loadRunning = false;
    await load;
    const streams = await Promise.all(followers);
    // Connected only now: on the embedded database, a connection that stays silent while instances
    // start holds up everyone else's statements.
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();

    // Every order decided; no 5xx anywhere; no client error.
    expect(clientErrors).toEqual([]);
    expect(proxy.serverErrors).toEqual([]);
    const orderIds = created.map((c) => c.orderId);
    expect(new Set(orderIds).size).toBe(created.length);
    const stored = (
      await db.query<{ id: string; reference: string; status: string; customer_id: string }>(
        `SELECT id::text, reference, status::text, customer_id FROM orders WHERE customer_id LIKE 'cust_rolling_%'`,
      )
    ).rows;
    // One order per Idempotency-Key, whatever the retries.
    expect(stored.map((o) => o.id).sort()).toEqual([...orderIds].sort());
    const history = (
      await db.query<{ id: string; order_id: string; to_status: string }>(
        `SELECT c.id::text, c.order_id::text, c.to_status::text FROM order_status_changes c
           JOIN orders o ON o.id = c.order_id WHERE o.customer_id LIKE 'cust_rolling_%' ORDER BY c.id`,
      )
    ).rows;
    const historyOf = new Map<string, StreamEvent[]>();
    for (const change of history) {
      const list = historyOf.get(change.order_id) ?? [];
      list.push({ id: change.id, status: change.to_status });
      historyOf.set(change.order_id, list);
    }

    // Exactly one pay-in at the provider per order, and the order's outcome is the provider's.
    const payinRequests = sandbox.state.requestsTo('/api/agent/bills/v3', 'POST');
    const walletOf = new Map(created.map((c) => [c.orderId, c.wallet]));
    const problems: string[] = [];
    for (const order of stored) {
      const payIn = sandbox.state.payIns.get(order.reference);
      const sent = payinRequests.filter((r) => (r.body as { order_id?: string })?.order_id === order.reference).length;
      if (sent !== 1) problems.push(`${order.id}: ${sent} pay-in requests`);
      const expected = walletOf.get(order.id) === TEST_WALLETS.SUCCESS ? 'SUCCEEDED' : 'FAILED';
      if (order.status !== expected) problems.push(`${order.id}: ${order.status}, expected ${expected}`);
      if (payIn?.status !== (expected === 'SUCCEEDED' ? 'SUCCESS' : 'FAILED')) problems.push(`${order.id}: sandbox says ${payIn?.status}`);
      const finals = (historyOf.get(order.id) ?? []).filter((c) => FINAL.has(c.status)).length;
      if (finals !== 1) problems.push(`${order.id}: ${finals} final transitions`);
    }
    expect(problems).toEqual([]);
    expect(sandbox.state.payIns.size).toBeGreaterThanOrEqual(stored.length);

    // Each stream: from its first event on, exactly the stored history, in order, each event once.
    let reconnections = 0;
    for (const stream of streams) {
      reconnections += stream.reconnections;
      expect({ orderId: stream.orderId, abrupt: stream.abrupt }).toEqual({ orderId: stream.orderId, abrupt: [] });
      const stored = historyOf.get(stream.orderId) ?? [];
      const from = stored.findIndex((c) => c.id === stream.events[0]?.id);
      expect({ orderId: stream.orderId, events: stream.events }).toEqual({
        orderId: stream.orderId,
        events: from < 0 ? ['(first event not in the history)'] : stored.slice(from),
      });
    }
    // The restarts did end streams, and they were resumed.
    expect(reconnections).toBeGreaterThan(0);

    console.log(
      `rolling restart: ${created.length} orders, ${streams.length} streams (${reconnections} reconnections with Last-Event-ID), ` +
        `${connectionRetries} POSTs retried after a connection error, answers by status ${JSON.stringify(Object.fromEntries(proxy.answered))}; ` +
        `${restarts.join('; ')}; instances started in ${((started - began) / 1000).toFixed(1)} s, ${((Date.now() - began) / 1000).toFixed(1)} s in all`,
    );
  }, 600_000);
});
