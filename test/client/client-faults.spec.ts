/**
 * What the client does when the network or the service misbehaves, against a scripted HTTP server:
 * which calls it retries (only with the same Idempotency-Key, only when safe), how long it waits
 * (Retry-After), that it stops (bounded attempts, abort), and how watchOrder resumes a dropped
 * stream (Last-Event-ID, the `retry:` field) and ends at a final status.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, ProblemError, type OrderStatusEvent } from '../../client/src';

type Handler = (req: IncomingMessage, res: ServerResponse, index: number) => void;

interface Scripted {
  baseUrl: string;
  requests: { at: number; method: string; url: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

/** A server answering its n-th request with handlers[n] (the last one for every request after). */
async function scriptedServer(handlers: Handler[]): Promise<Scripted> {
  const requests: Scripted['requests'] = [];
  const server: Server = createServer((req, res) => {
    const index = requests.length;
    requests.push({ at: Date.now(), method: req.method!, url: req.url!, headers: req.headers });
    req.resume();
    req.on('end', () => handlers[Math.min(index, handlers.length - 1)](req, res, index));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((done) => server.close(() => done()));
    },
  };
}

const problem =
  (status: number, code: string, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
    res.end(
      JSON.stringify({ type: `https://example.test/${code}`, title: code, status, detail: `detail of ${code}`, code, requestId: 'r1' }),
    );
  };
const created: Handler = (_req, res) => {
  res.writeHead(201, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: 'o1', status: 'PROCESSING' }));
};
const dropConnection: Handler = (req) => req.socket.destroy();
const ORDER = {
  amount: '1500',
  currency: 'XAF',
  wallet: '237600000001',
  service: 1,
  description: 'd',
  payer: 'p',
  payerEmail: 'p@example.com',
};

let server: Scripted | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const clientOf = (baseUrl: string, retry = { baseDelayMs: 20 }) => createClient({ baseUrl, getToken: () => 'token-1', retry });

describe('retries of the client', () => {
  it('retries a money-moving call after a network error, 409 idempotency_in_progress and 503, always with the same Idempotency-Key', async () => {
    server = await scriptedServer([dropConnection, problem(409, 'idempotency_in_progress'), problem(503, 'service_unavailable'), created]);
    await expect(clientOf(server.baseUrl).createOrder(ORDER)).resolves.toEqual({ id: 'o1', status: 'PROCESSING' });
    expect(server.requests).toHaveLength(4);
    const keys = new Set(server.requests.map((r) => r.headers['idempotency-key']));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(server.requests.every((r) => r.headers.authorization === 'Bearer token-1')).toBe(true);
  });

  it('a given Idempotency-Key is sent as given; two calls without one get two keys', async () => {
    server = await scriptedServer([created]);
    const client = clientOf(server.baseUrl);
    await client.createOrder(ORDER, { idempotencyKey: 'my-key-1' });
    await client.createOrder(ORDER);
    await client.createOrder(ORDER);
    const [given, first, second] = server.requests.map((r) => r.headers['idempotency-key']);
    expect(given).toBe('my-key-1');
    expect(first).not.toBe(second);
  });

  it('waits what Retry-After says on a 429, and does not retry a 429 without it, nor one longer than maxDelayMs', async () => {
    server = await scriptedServer([problem(429, 'customer_limit_reached', { 'retry-after': '1' }), created]);
    await clientOf(server.baseUrl).createOrder(ORDER);
    expect(server.requests[1].at - server.requests[0].at).toBeGreaterThanOrEqual(950);
    await server.close();

    server = await scriptedServer([problem(429, 'customer_limit_reached')]);
    await expect(clientOf(server.baseUrl).createOrder(ORDER)).rejects.toMatchObject({ status: 429, code: 'customer_limit_reached' });
    expect(server.requests).toHaveLength(1);
    await server.close();

    server = await scriptedServer([problem(429, 'customer_limit_reached', { 'retry-after': '3600' })]);
    const refused = await clientOf(server.baseUrl)
      .createOrder(ORDER)
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 429, retryAfter: 3600 });
    expect(server.requests).toHaveLength(1);
  });

  it('never retries what may have acted or will not change (500, 502, 422), nor a call without an Idempotency-Key (freezeCard)', async () => {
    for (const [status, code] of [
      [500, 'internal_error'],
      [502, 'provider_error'],
      [422, 'idempotency_key_reused'],
    ] as const) {
      server = await scriptedServer([problem(status, code), created]);
      const refused = await clientOf(server.baseUrl)
        .createOrder(ORDER)
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ProblemError);
      expect(refused).toMatchObject({ status, code, detail: `detail of ${code}` });
      expect(server.requests).toHaveLength(1);
      await server.close();
    }
    server = await scriptedServer([problem(503, 'service_unavailable'), created]);
    await expect(clientOf(server.baseUrl).freezeCard('c1')).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
  });

  it('gives up after maxAttempts with the last problem; a network failure is a ProblemError network_error', async () => {
    server = await scriptedServer([problem(503, 'service_unavailable')]);
    await expect(
      createClient({ baseUrl: server.baseUrl, getToken: () => 't', retry: { maxAttempts: 3, baseDelayMs: 10 } }).createOrder(ORDER),
    ).rejects.toMatchObject({
      status: 503,
    });
    expect(server.requests).toHaveLength(3);
    await server.close();

    server = await scriptedServer([dropConnection]);
    const failure = await clientOf(server.baseUrl)
      .createOrder(ORDER)
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ name: 'ProblemError', status: 0, code: 'network_error' });
    expect(server.requests).toHaveLength(4);
  });

  it('a getToken that fails rejects the call with its own error: nothing is sent, nothing retried', async () => {
    server = await scriptedServer([created]);
    const signedOut = new Error('the session ended');
    const client = createClient({ baseUrl: server.baseUrl, getToken: () => Promise.reject(signedOut), retry: { baseDelayMs: 10 } });
    await expect(client.createOrder(ORDER)).rejects.toBe(signedOut);
    await expect(client.watchOrder('o1').next()).rejects.toBe(signedOut);
    expect(server.requests).toHaveLength(0);
  });

  it('an abort stops the waits between attempts at once', async () => {
    server = await scriptedServer([problem(429, 'customer_limit_reached', { 'retry-after': '20' })]);
    const controller = new AbortController();
    const started = Date.now();
    const call = createClient({ baseUrl: server.baseUrl, getToken: () => 't', retry: { maxDelayMs: 60_000 } }).createOrder(ORDER, {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 200);
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(server.requests).toHaveLength(1);
  });
});

const sse =
  (...lines: string[]): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(lines.join(''));
  };
const statusEvent = (id: number, status: string, fromStatus: string | null) =>
  `event: status\nid: ${id}\ndata: ${JSON.stringify({ orderId: 'o1', status, fromStatus, reason: 'r', at: '2026-11-28T10:00:00.000Z' })}\n\n`;

describe('watchOrder', () => {
  it('resumes a dropped stream with Last-Event-ID after the `retry:` delay, yields each event once and ends at the final status', async () => {
    server = await scriptedServer([
      sse(': keep-alive\n\n', statusEvent(7, 'PENDING', null), statusEvent(8, 'PROCESSING', 'PENDING'), 'retry: 400\n\n'),
      problem(503, 'service_unavailable', { 'retry-after': '0' }),
      sse(statusEvent(9, 'SUCCEEDED', 'PROCESSING')),
      sse(statusEvent(10, 'FAILED', 'SUCCEEDED')),
    ]);
    const events: OrderStatusEvent[] = [];
    for await (const event of clientOf(server.baseUrl).watchOrder('o1')) events.push(event);
    expect(events.map((e) => [e.eventId, e.status])).toEqual([
      ['7', 'PENDING'],
      ['8', 'PROCESSING'],
      ['9', 'SUCCEEDED'],
    ]);
    expect(server.requests.map((r) => [r.url, r.headers['last-event-id'], r.headers.authorization])).toEqual([
      ['/v1/orders/o1/events', undefined, 'Bearer token-1'],
      ['/v1/orders/o1/events', '8', 'Bearer token-1'],
      ['/v1/orders/o1/events', '8', 'Bearer token-1'],
    ]);
    // retry: 400 was honoured before the first reconnection.
    expect(server.requests[1].at - server.requests[0].at).toBeGreaterThanOrEqual(380);
  });

  it('a stream that ends with nothing and no `retry:` ends the watch when the order is final, and is resumed when it is not', async () => {
    const orderIs =
      (status: string): Handler =>
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'o1', status }));
      };
    // Resumed after the final event: the service ends at once; the order says SUCCEEDED.
    server = await scriptedServer([sse(''), orderIs('SUCCEEDED')]);
    const none: OrderStatusEvent[] = [];
    for await (const event of clientOf(server.baseUrl).watchOrder('o1', { lastEventId: '9' })) none.push(event);
    expect(none).toEqual([]);
    expect(server.requests.map((r) => r.url)).toEqual(['/v1/orders/o1/events', '/v1/orders/o1']);
    await server.close();

    // A proxy cut the stream: the order is still PROCESSING, so the watch goes on.
    server = await scriptedServer([sse(''), orderIs('PROCESSING'), sse(statusEvent(9, 'SUCCEEDED', 'PROCESSING'))]);
    const events: string[] = [];
    for await (const event of clientOf(server.baseUrl).watchOrder('o1', { lastEventId: '8', retryMs: 50 })) events.push(event.status);
    expect(events).toEqual(['SUCCEEDED']);
    expect(server.requests.map((r) => [r.url, r.headers['last-event-id']])).toEqual([
      ['/v1/orders/o1/events', '8'],
      ['/v1/orders/o1', undefined],
      ['/v1/orders/o1/events', '8'],
    ]);
  });

  it('throws a problem that will not change (401, 404) at once, and stops when aborted', async () => {
    server = await scriptedServer([problem(401, 'unauthorized')]);
    await expect(clientOf(server.baseUrl).watchOrder('o1').next()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(server.requests).toHaveLength(1);
    await server.close();

    server = await scriptedServer([sse(statusEvent(1, 'PROCESSING', 'PENDING'))]);
    const controller = new AbortController();
    const seen: string[] = [];
    const watching = (async () => {
      for await (const event of clientOf(server.baseUrl).watchOrder('o1', { signal: controller.signal, retryMs: 50 })) {
        seen.push(event.status);
        if (seen.length === 3) controller.abort();
      }
    })();
    await expect(watching).rejects.toMatchObject({ name: 'AbortError' });
    // The same event again on every reconnection (this server ignores Last-Event-ID); never after the abort.
    expect(seen).toEqual(['PROCESSING', 'PROCESSING', 'PROCESSING']);
  });
});
