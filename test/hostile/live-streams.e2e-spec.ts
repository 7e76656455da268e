import { Client } from 'pg';
import { CallbackUrlsService } from '../../src/orders/callback-urls.service';
import { CATCH_UP_INTERVAL_MS } from '../../src/orders/order-events.service';
import { OrderStreams } from '../../src/orders/order-streams';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer, parseSse } from '../support/orders-client';
import { usingRealPostgres } from '../support/test-database';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { startClientProcess } from './live-streams-client-process';
import type { ClientReport } from './live-streams-clients';
import { openSseClient as openStream, type SseClient as StreamClient } from './live-streams-sse-client';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(what: string, predicate: () => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(25);
  }
}

/** Opens `tokens.length` streams, `concurrency` connection attempts at a time (the listen backlog is finite). */
async function openStreams(port: number, tokens: string[], orderId: string, concurrency = 100): Promise<StreamClient[]> {
  const clients: StreamClient[] = new Array(tokens.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < tokens.length) {
        const index = next++;
        clients[index] = await openStream(port, tokens[index], orderId);
      }
    }),
  );
  return clients;
}

const statusesOf = (client: StreamClient) => parseSse(client.body).map((e) => e.data?.status);

async function timedGet(port: number, path: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}

const originalQuery = Client.prototype.query;

/** Every statement this process sends to the database while `during` runs (all pg connections). */
async function statementsDuring(during: () => Promise<void>): Promise<string[]> {
  const statements: string[] = [];
  const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    statements.push(typeof first === 'string' ? first : (first?.text ?? ''));
    return originalQuery.apply(this, args as never);
  });
  try {
    await during();
  } finally {
    spy.mockRestore();
  }
  return statements;
}

/**
 * Defect: every open stream polled the order history each second and filtered every event of
 * the instance through its own pipeline. 2,000 streams on one order made readiness take 13.5 s
 * and the heap climb without end. Now: caps per user and per instance, one catch-up query per
 * instance, events routed by order id, keep-alive comments.
 */
describe('live status streams under load', () => {
  const STREAMS = 2_000;
  const PER_USER = 20;
  let sandbox: RunningSandbox;
  let service: TestService;
  let port: number;
  let orderId: string;
  let successPath: string;
  let bulk: ReturnType<typeof startClientProcess>;
  let watcherTokens: string[] = [];

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(
      sandbox,
      { SSE_MAX_STREAMS: String(STREAMS), SSE_MAX_STREAMS_PER_USER: String(PER_USER), SSE_KEEPALIVE_SECONDS: '1', LOG_LEVEL: 'warn' },
      [],
      { listen: true },
    );
    port = service.config.port;
    const alice = await customer(service);
    const created = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK });
    expect(created.body.status).toBe('PROCESSING');
    orderId = created.body.id;
    const success = new URL(service.get(CallbackUrlsService).urlsFor(orderId).successUrl);
    successPath = success.pathname + success.search;
    // 100 finance users (they may read every order), 20 streams each: 2,000 streams on one order.
    const users = await Promise.all(Array.from({ length: STREAMS / PER_USER }, (_, i) => service.bearer(`watcher-${i}`, 'finance')));
    watcherTokens = users.flatMap((token) => Array.from({ length: PER_USER }, () => token));
  }, 60_000);
  afterAll(async () => {
    await bulk?.ask({ cmd: 'closeAll' }).catch(() => undefined);
    bulk?.stop();
    await service.close();
    await sandbox.close();
  });

  it('holds 2,000 idle streams on one order: readiness stays fast, no database work per stream, keep-alives flow', async () => {
    bulk = startClientProcess();
    const opened = await bulk.ask<number[]>({ cmd: 'open', port, orderId, tokens: watcherTokens, concurrency: 100 });
    expect(opened.filter((status) => status !== 200)).toEqual([]);
    await bulk.waitAll('snapshot');
    expect(service.get(OrderStreams).openStreams()).toBe(STREAMS);

    const idleMs = 3_500;
    let readiness: { status: number; ms: number }[] = [];
    const statements = await statementsDuring(async () => {
      await sleep(idleMs - 500);
      readiness = [];
      for (let i = 0; i < 7; i++) readiness.push(await timedGet(port, '/health/ready'));
    });

    // Readiness answers at once: nothing queues in front of its query. The median of seven, under
    // half a second: with a poll per stream it took seconds, while a busy machine running the
    // embedded database in this process reads about 100 ms (the statement count below is exact).
    expect(readiness.every((r) => r.status === 200)).toBe(true);
    const sorted = readiness.map((r) => r.ms).sort((a, b) => a - b);
    expect(sorted[3]).toBeLessThan(500);

    // The idle streams' only database work is the instance's one catch-up query per interval; the
    // rest is readiness itself and, at most, a scheduled job that happens to fire.
    const catchUps = statements.filter((s) => s.includes('unnest(') && s.includes('order_status_changes'));
    const otherHistoryReads = statements.filter((s) => s.includes('order_status_changes') && !catchUps.includes(s));
    expect(otherHistoryReads).toEqual([]);
    expect(catchUps.length).toBeLessThanOrEqual(Math.ceil(idleMs / CATCH_UP_INTERVAL_MS) + 1);
    // On PostgreSQL the notifications are proven to arrive: no catch-up either.
    if (usingRealPostgres()) expect(catchUps).toEqual([]);
    expect(statements.length).toBeLessThan(catchUps.length + 7 * 2 + 30);

    // Memory per stream and while idle: test/perf/live-streams-memory.perf-spec.ts.

    // Each stream got its snapshot once, then keep-alive comments (one a second here).
    const reports = await bulk.ask<ClientReport[]>({ cmd: 'report' });
    expect(new Set(reports.map((r) => r.statuses.join()))).toEqual(new Set(['PROCESSING']));
    expect(reports.every((r) => r.keepAlives >= 2)).toBe(true);
  }, 120_000);

  it('refuses a stream beyond the per-user cap and beyond the instance cap: 429 problem+json with Retry-After', async () => {
    const overUser = await openStream(port, watcherTokens[0], orderId);
    await waitUntil('the refusal is read', () => overUser.ended);
    expect(overUser.status).toBe(429);
    expect(overUser.headers['content-type']).toContain('application/problem+json');
    expect(Number(overUser.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(overUser.body)).toMatchObject({ status: 429, code: 'too_many_streams', detail: expect.stringContaining('per user') });

    const newcomer = await service.bearer('watcher-newcomer', 'finance');
    const overInstance = await openStream(port, newcomer, orderId);
    await waitUntil('the refusal is read', () => overInstance.ended);
    expect(overInstance.status).toBe(429);
    expect(overInstance.headers['content-type']).toContain('application/problem+json');
    expect(Number(overInstance.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(overInstance.body)).toMatchObject({
      status: 429,
      code: 'too_many_streams',
      detail: expect.stringContaining('instance'),
    });
    expect(service.get(OrderStreams).openStreams()).toBe(STREAMS);
  }, 30_000);

  it('delivers the deciding callback to all 2,000 streams, each ends after it and frees its place', async () => {
    const res = await fetch(`http://127.0.0.1:${port}${successPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
    await bulk.waitAll('ended');
    const reports = await bulk.ask<ClientReport[]>({ cmd: 'report' });
    expect(reports).toHaveLength(STREAMS);
    expect(new Set(reports.map((r) => r.statuses.join()))).toEqual(new Set(['PROCESSING,SUCCEEDED']));
    await waitUntil('every place is free', () => service.get(OrderStreams).openStreams() === 0, 10_000);

    // A new stream on the decided order: its final status, then the end.
    const late = await openStream(port, watcherTokens[0], orderId);
    expect(late.status).toBe(200);
    await waitUntil('the late stream ended', () => late.ended);
    expect(statusesOf(late)).toEqual(['SUCCEEDED']);
  }, 120_000);

  it('gives a place back when its client disconnects', async () => {
    const bob = await customer(service);
    const quiet = (await bob.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK })).body;
    const held = await openStreams(
      port,
      Array.from({ length: PER_USER }, () => bob.token),
      quiet.id,
      PER_USER,
    );
    expect(held.map((c) => c.status)).toEqual(Array.from({ length: PER_USER }, () => 200));
    expect(service.get(OrderStreams).openStreams(bob.sub)).toBe(PER_USER);
    const refused = await openStream(port, bob.token, quiet.id);
    expect(refused.status).toBe(429);

    held[0].close();
    await waitUntil('the place is back', () => service.get(OrderStreams).openStreams(bob.sub) === PER_USER - 1, 10_000);
    const again = await openStream(port, bob.token, quiet.id);
    expect(again.status).toBe(200);
    await waitUntil('its snapshot arrives', () => again.body.includes('event: status'));

    for (const client of [...held, again]) client.close();
    await waitUntil('every place of bob is back', () => service.get(OrderStreams).openStreams(bob.sub) === 0, 10_000);
    // A refused request, a 404 and a bad id hold no place either.
    const stranger = await customer(service);
    const notFound = await openStream(port, stranger.token, quiet.id);
    expect(notFound.status).toBe(404);
    await waitUntil('the 404 is read', () => notFound.ended);
    expect(service.get(OrderStreams).openStreams()).toBe(0);
  }, 60_000);
});
