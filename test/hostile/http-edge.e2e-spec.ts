import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { buildOpenApiDocument, SIGNED_CALLBACK_LIMIT_PER_MINUTE } from '../../src/create-app';
import { CallbackUrlsService } from '../../src/orders/callback-urls.service';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { withLongestLoopHold } from '../support/event-loop-hold';
import { customer } from '../support/orders-client';
import { orderRequest } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** One request written on a socket as is (duplicate headers, garbage), and the answer as parsed text. */
function rawRequest(port: number, text: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const answer = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = answer.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
  });
}

/**
 * Writes `text` (a request whose body may never come) and resolves with the first answer, as soon
 * as it is complete, without waiting for the socket to close.
 */
function firstAnswer(port: number, text: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      received += chunk;
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd === -1) return;
      const [statusLine, ...lines] = received.slice(0, headEnd).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      const body = received.slice(headEnd + 4);
      if (Buffer.byteLength(body) < Number(headers['content-length'] ?? 0)) return;
      socket.destroy();
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

const PUBLIC_LIMIT = 5;
const CORS_ORIGIN = 'https://shop.example.com';
/** Some of helmet's headers (SECURITY_HEADERS in create-app.ts), which every answer carries. */
// Strict-Transport-Security is sent only by an https service (PUBLIC_BASE_URL); these instances are plain HTTP.
const SECURITY_HEADER_NAMES = ['content-security-policy', 'x-content-type-options', 'x-frame-options'];

describe('the HTTP edge under attack', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let port: number;
  // Each test speaks from its own client address (TRUST_PROXY), so that rate-limit buckets never mix.
  const clientIp = () => `203.0.113.${Math.floor(Math.random() * 250) + 1}`;
  const usedIps = new Set<string>();
  const freshIp = () => {
    for (;;) {
      const ip = clientIp();
      if (!usedIps.has(ip)) return (usedIps.add(ip), ip);
    }
  };
  const expectProblem = (
    res: { status: number; headers: Record<string, string>; body: unknown; text?: string },
    status: number,
    code: string,
  ) => {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    for (const name of SECURITY_HEADER_NAMES) expect([name, res.headers[name]]).toEqual([name, expect.any(String)]);
    const body = typeof res.body === 'string' ? JSON.parse(res.body) : res.text ? JSON.parse(res.text) : res.body;
    expect(body).toMatchObject({
      type: expect.stringContaining(code),
      title: expect.any(String),
      status,
      code,
      requestId: expect.any(String),
    });
    return body as Record<string, unknown>;
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(
      sandbox,
      { PUBLIC_RATE_LIMIT_PER_MINUTE: String(PUBLIC_LIMIT), TRUST_PROXY: 'true', CORS_ORIGINS: CORS_ORIGIN },
      [],
      { listen: true },
    );
    port = (service.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  describe('the public rate limit applies to the routed path, whatever its spelling', () => {
    it.each([
      ['/metrics', ['/metrics', '/%6detrics', '/%6D%65%74%72%69%63%73', '/metrics?x=1', '/%6detrics?y']],
      ['/health/live', ['/health/live', '/%68ealth/live', '/health/%6cive', '/health/live/', '/health%2Flive']],
    ])('%s', async (_route, spellings) => {
      const ip = freshIp();
      const statuses: number[] = [];
      for (let round = 0; round < 3; round++) {
        for (const spelling of spellings) statuses.push((await request(service.server).get(spelling).set('x-forwarded-for', ip)).status);
      }
      // Spellings the router does not resolve to the route are 404 and count for nothing.
      const served = statuses.filter((status) => status !== 404);
      expect(served.slice(0, PUBLIC_LIMIT).every((status) => status === 200)).toBe(true);
      expect(served.slice(PUBLIC_LIMIT).length).toBeGreaterThanOrEqual(3);
      expect(served.slice(PUBLIC_LIMIT).every((status) => status === 429)).toBe(true);
      // The limit is that client's: another client is served at once meanwhile.
      const other = await request(service.server).get(spellings[0]).set('x-forwarded-for', freshIp());
      expect(other.status).toBe(200);
    });

    it('an anonymous callback flood stores no more than the limit, each record small', async () => {
      const ip = freshIp();
      const orderIds = Array.from({ length: 16 }, () => randomUUID());
      const spellings = [
        '/%761/callbacks/payin/ID/success',
        '/v1/callbacks/payin/ID/success',
        '/v1/%63allbacks/payin/ID/failure',
        '/v1/callbacks/%70ayin/ID/%73uccess',
      ];
      const statuses: number[] = [];
      for (const [i, orderId] of orderIds.entries()) {
        const path = spellings[i % spellings.length].replace('ID', orderId) + '?token=x';
        statuses.push(
          (
            await request(service.server)
              .post(path)
              .set('x-forwarded-for', ip)
              .set('content-type', 'text/plain')
              .send('z'.repeat(64 * 1024))
          ).status,
        );
      }
      expect(statuses.filter((status) => status === 404)).toHaveLength(PUBLIC_LIMIT);
      expect(statuses.filter((status) => status === 429)).toHaveLength(orderIds.length - PUBLIC_LIMIT);
      const stored = await service.prisma.providerCallback.findMany({ where: { pathOrderId: { in: orderIds } } });
      expect(stored).toHaveLength(PUBLIC_LIMIT);
      for (const record of stored) {
        expect(record.result).toBe('REJECTED');
        expect(Buffer.byteLength(record.rawBody ?? '')).toBeLessThanOrEqual(1024);
      }
    });

    it("the provider's signed callback is never limited by anonymous traffic from its address", async () => {
      const ip = freshIp();
      const alice = await customer(service);
      const created = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK });
      expect(created.body.status).toBe('PROCESSING');
      for (let i = 0; i < PUBLIC_LIMIT + 3; i++) await request(service.server).get('/%6detrics').set('x-forwarded-for', ip);
      const limited = await request(service.server).get('/metrics').set('x-forwarded-for', ip);
      expectProblem(limited, 429, 'too_many_requests');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      const url = new URL(service.get(CallbackUrlsService).urlsFor(created.body.id).successUrl);
      const signed = await request(service.server)
        .post(url.pathname + url.search)
        .set('x-forwarded-for', ip)
        .send({ status: 'SUCCESS' });
      expect(signed.status).toBe(200);
      expect((await alice.getOrder(created.body.id)).body.status).toBe('SUCCEEDED');
      // Its retries do not draw on the address's bucket either, and that bucket stays exhausted.
      for (let i = 0; i < 3; i++)
        expect(
          (
            await request(service.server)
              .get(url.pathname + url.search)
              .set('x-forwarded-for', ip)
          ).status,
        ).toBe(200);
      expect((await request(service.server).get('/metrics').set('x-forwarded-for', ip)).status).toBe(429);
    });
    it('a signed callback URL has a bucket of its own: 60 calls a minute, whatever the address', async () => {
      const alice = await customer(service);
      const created = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK });
      const url = new URL(service.get(CallbackUrlsService).urlsFor(created.body.id).failureUrl);
      const statuses: number[] = [];
      for (let i = 0; i < SIGNED_CALLBACK_LIMIT_PER_MINUTE + 2; i++)
        statuses.push(
          (
            await request(service.server)
              .get(url.pathname + url.search)
              .set('x-forwarded-for', freshIp())
          ).status,
        );
      expect(statuses.slice(0, SIGNED_CALLBACK_LIMIT_PER_MINUTE).every((status) => status === 200)).toBe(true);
      expect(statuses.slice(SIGNED_CALLBACK_LIMIT_PER_MINUTE)).toEqual([429, 429]);
      // The other URL of the same order is another bucket.
      const success = new URL(service.get(CallbackUrlsService).urlsFor(created.body.id).successUrl);
      expect(
        (
          await request(service.server)
            .get(success.pathname + success.search)
            .set('x-forwarded-for', freshIp())
        ).status,
      ).toBe(200);
    });
  });

  describe('bodies are bounded before they are parsed or validated', () => {
    const post = async (body: string, contentType = 'application/json') => {
      const alice = await customer(service);
      const before = sandbox.state.requests.length;
      const res = await request(service.server)
        .post('/v1/orders')
        .auth(alice.token, { type: 'bearer' })
        .set('Idempotency-Key', randomUUID())
        .set('content-type', contentType)
        .send(body);
      expect(sandbox.state.requests.length).toBe(before);
      expect(await service.prisma.order.count({ where: { customerId: alice.sub } })).toBe(0);
      return res;
    };

    it('50,000 keys are refused in milliseconds and the event loop never stalls', async () => {
      const wide = JSON.stringify({ ...orderRequest(), ...Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i])) });
      expect(wide.length).toBeGreaterThan(600_000);
      const started = performance.now();
      const {
        result: [refused, health],
        holdCpuMs,
      } = await withLongestLoopHold(() =>
        Promise.all([post(wide), request(service.server).get('/health/live').set('x-forwarded-for', freshIp())]),
      );
      const elapsedMs = performance.now() - started;
      // The old code held the loop 3-6 s on such a body.
      expect(holdCpuMs).toBeLessThan(200);
      expect(elapsedMs).toBeLessThan(2_000);
      expect(health.status).toBe(200);
      const problem = expectProblem(refused, 400, 'body_too_complex');
      expect(problem.detail).toMatch(/1000 keys/);
    });

    it.each([
      ['JSON nested 1,500 deep', '['.repeat(1_500) + ']'.repeat(1_500), /deeper than 32/],
      ['an object nested 1,500 deep', '{"a":'.repeat(1_500) + '1' + '}'.repeat(1_500), /deeper than 32/],
      [
        '33 levels',
        JSON.stringify({ ...orderRequest(), description: undefined, extra: JSON.parse('['.repeat(32) + ']'.repeat(32)) }),
        /deeper than 32/,
      ],
      [
        '1,001 keys',
        JSON.stringify({ ...orderRequest(), ...Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`k${i}`, 1])) }),
        /1000 keys/,
      ],
      ['1,001 copies of one key', `{${Array.from({ length: 1_001 }, () => '"amount":"1"').join(',')}}`, /1000 keys/],
      [
        '12,000 values spread over arrays',
        JSON.stringify({ ...orderRequest(), extra: Array.from({ length: 12 }, () => Array.from({ length: 1_000 }, () => 0)) }),
        /10000 values/,
      ],
    ])('%s: 400 body_too_complex, never a 500', async (_name, body, detail) => {
      const problem = expectProblem(await post(body), 400, 'body_too_complex');
      expect(problem.detail).toMatch(detail);
    });

    it('a form of 2,000 fields is refused the same way', async () => {
      expectProblem(
        await post(Array.from({ length: 2_000 }, (_, i) => `f${i}=1`).join('&'), 'application/x-www-form-urlencoded'),
        400,
        'body_too_complex',
      );
    });

    it('a query string of more than 1,000 fields is refused before validation, also on GET', async () => {
      const token = await service.bearer('alice', 'finance');
      const fields = (count: number) => Array.from({ length: count }, (_, i) => i.toString(36)).join('&');
      const started = performance.now();
      const problem = expectProblem(
        await request(service.server)
          .get(`/v1/orders?${fields(1_001)}`)
          .auth(token, { type: 'bearer' }),
        400,
        'query_too_complex',
      );
      expect(problem.detail).toMatch(/more than 1000 fields/);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(
        (
          await request(service.server)
            .get(`/v1/orders?${fields(1_000)}`)
            .auth(token, { type: 'bearer' })
        ).body.code,
      ).not.toBe('query_too_complex');
    });

    it('32 levels pass the bound (and meet ordinary validation)', async () => {
      const res = await post(JSON.stringify({ ...orderRequest(), extra: JSON.parse('['.repeat(31) + ']'.repeat(31)) }));
      expect(res.status).toBe(400);
      expect(res.body.code).not.toBe('body_too_complex');
    });
  });

  describe('router and HTTP-layer errors are problem+json', () => {
    it('a URL that does not decode', async () => {
      const res = await request(service.server)
        .get('/v1/orders/%FF')
        .set('authorization', `Bearer ${await service.bearer('alice')}`);
      const problem = expectProblem(res, 400, 'bad_url');
      expect(res.headers['x-request-id']).toBe(problem.requestId);
    });

    it('a path parameter over 100 characters', async () => {
      expectProblem(await request(service.server).get('/v1/orders/' + 'a'.repeat(150)), 414, 'uri_too_long');
      expectProblem(
        await request(service.server)
          .post(`/v1/callbacks/payin/${'b'.repeat(101)}/success`)
          .set('x-forwarded-for', freshIp()),
        414,
        'uri_too_long',
      );
    });

    it('headers over 16 KiB', async () => {
      const res = await rawRequest(port, `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      const problem = expectProblem(res, 431, 'headers_too_large');
      expect(res.headers['x-request-id']).toBe(problem.requestId);
    });

    it('a request that is not HTTP', async () => {
      expectProblem(await rawRequest(port, 'HELLO THERE\r\n\r\n'), 400, 'malformed_request');
    });

    it('a request without Host (HTTP/1.1 requires it; HTTP/1.0 does not)', async () => {
      expectProblem(await rawRequest(port, 'GET /health/live HTTP/1.1\r\nConnection: close\r\n\r\n'), 400, 'missing_host');
      expect((await rawRequest(port, 'GET /health/live HTTP/1.0\r\n\r\n')).status).toBe(200);
    });

    it('a request with two Host headers, however spelt, and even when both are the same', async () => {
      // Its own client address: /health is rate-limited per client.
      const from = `X-Forwarded-For: ${freshIp()}\r\n`;
      for (const hosts of ['Host: x\r\nHost: y', 'Host: x\r\nhost: x', 'HOST: 127.0.0.1\r\nX-A: 1\r\nhost: evil.example'])
        expectProblem(
          await rawRequest(port, `GET /health/live HTTP/1.1\r\n${from}${hosts}\r\nConnection: close\r\n\r\n`),
          400,
          'duplicate_host_header',
        );
      expectProblem(await rawRequest(port, `GET /health/live HTTP/1.0\r\n${from}Host: x\r\nHost: y\r\n\r\n`), 400, 'duplicate_host_header');
      // One Host stays fine.
      expect((await rawRequest(port, `GET /health/live HTTP/1.1\r\n${from}Host: x\r\nConnection: close\r\n\r\n`)).status).toBe(200);
    });

    it('an OPTIONS request that is not a CORS preflight; a preflight passes without a token', async () => {
      const ip = freshIp();
      expectProblem(await request(service.server).options('/v1/orders').set('x-forwarded-for', ip), 400, 'invalid_preflight');
      expectProblem(
        await request(service.server).options('/v1/orders').set('origin', CORS_ORIGIN).set('x-forwarded-for', ip),
        400,
        'invalid_preflight',
      );
      const preflight = await request(service.server)
        .options('/v1/orders')
        .set('origin', CORS_ORIGIN)
        .set('access-control-request-method', 'POST')
        .set('x-forwarded-for', ip);
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe(CORS_ORIGIN);
    });

    it('every route that needs a token refuses a request without one before its body arrives (401)', async () => {
      const document = buildOpenApiDocument(service.app);
      const checked: string[] = [];
      for (const [path, operations] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(operations as Record<string, { security?: unknown[] }>)) {
          if (!operation.security?.length) continue;
          const url = path
            .split('/')
            .map((segment) => (segment.startsWith('{') ? randomUUID() : segment))
            .join('/');
          // Ten bytes of body announced, one sent: an answer can only come from before the body.
          const res = await firstAnswer(
            port,
            `${method.toUpperCase()} ${url} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{`,
          );
          expect([method, path, res.status]).toEqual([method, path, 401]);
          expectProblem(res, 401, 'unauthenticated');
          checked.push(`${method} ${path}`);
        }
      }
      expect(checked).toEqual(expect.arrayContaining(['post /v1/orders', 'get /v1/callbacks', 'get /v1/orders/{id}/events']));
    });

    it('a caller without the role is refused 403 before its body arrives', async () => {
      const token = await service.bearer('fiona', 'finance');
      const res = await firstAnswer(
        port,
        `POST /v1/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nIdempotency-Key: ${randomUUID()}\r\nContent-Length: 10\r\n\r\n{`,
      );
      expectProblem(res, 403, 'forbidden');
    });

    it('a route that needs a token is refused 401 before its body is read', async () => {
      const refused = await rawRequest(
        port,
        'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{"a":',
      );
      expectProblem(refused, 401, 'unauthenticated');
      // The finance list of callbacks is not one of the provider's public routes.
      expectProblem(await request(service.server).get('/v1/callbacks'), 401, 'unauthenticated');
      expectProblem(
        await request(service.server)
          .get('/v1/callbacks')
          .auth(await service.bearer('alice'), { type: 'bearer' }),
        403,
        'forbidden',
      );
    });

    it('an unknown route', async () => {
      expectProblem(await request(service.server).get('/nowhere/%41'), 404, 'not_found');
      expectProblem(await request(service.server).delete('/v1/orders'), 404, 'not_found');
    });
  });

  describe('the access log names the route, never the URL', () => {
    it.each([
      ['the token parameter', (token: string) => `?token=${token}`],
      ['a percent-encoded name', (token: string) => `?%74oken=${token}`],
      ['a repeated name', (token: string) => `?token[]=${token}&token[]=${token}`],
      ['a token in the path', (token: string) => `/${token}?x=1`],
    ])('%s', async (_name, spelling) => {
      const alice = await customer(service);
      const created = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK });
      const url = new URL(service.get(CallbackUrlsService).urlsFor(created.body.id).successUrl);
      const token = url.searchParams.get('token')!;
      const requestId = `log-${randomUUID()}`;
      await request(service.server)
        .get(url.pathname + spelling(token))
        .set('x-forwarded-for', freshIp())
        .set('x-request-id', requestId);
      const line = service.logs.entries().find((entry) => entry.requestId === requestId && entry.msg === 'http request');
      expect(line).toMatchObject({ method: 'GET', status: expect.any(Number) });
      expect(line?.route === '/v1/callbacks/payin/:orderId/:outcome' || line?.route === 'unmatched').toBe(true);
      expect(line).not.toHaveProperty('url');
      expect(JSON.stringify(service.logs.entries())).not.toContain(token);
    });
  });

  describe('two Authorization headers are ambiguous', () => {
    it.each([
      ['the same valid token twice', (token: string) => [token, token]],
      ['a valid token then a wrong one', (token: string) => [token, 'wrong']],
      ['a wrong token then a valid one', (token: string) => ['wrong', token]],
    ])('%s: 400, whichever comes first', async (_name, tokens) => {
      const token = await service.bearer('alice', 'finance');
      const lines = tokens(token)
        .map((value) => `Authorization: Bearer ${value}\r\n`)
        .join('');
      const res = await rawRequest(port, `GET /v1/orders HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${lines}\r\n`);
      expectProblem(res, 400, 'duplicate_authorization_header');
    });

    it('one header is fine', async () => {
      const token = await service.bearer('alice', 'finance');
      const res = await rawRequest(
        port,
        `GET /v1/orders HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      );
      expect(res.status).toBe(200);
    });
  });
});
