import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { RejectedCallbackPurgeJob } from '../../src/callbacks/rejected-callback-purge.job';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { quietOrder } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * Hostile callbacks: the URL and its token decide, the body is evidence. A signed callback is
 * stored and applied whatever it carries; an unsigned one is stored small and purged.
 */
describe('hostile provider callbacks', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  const storedOf = (orderId: string) =>
    service.prisma.providerCallback.findMany({ where: { pathOrderId: orderId }, orderBy: { receivedAt: 'asc' } });

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, { TRUST_PROXY: 'true' });
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  describe('a signed callback is stored and applied whatever its body holds', () => {
    const deep = '['.repeat(1_500) + ']'.repeat(1_500);
    const wide = `{${Array.from({ length: 50_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`;
    it.each([
      ['truncated JSON', 'application/json', '{"status":"SUCCESS","amount":'],
      ['form data sent as JSON', 'application/json', 'status=SUCCESS&amount=1500'],
      ['a __proto__ key', 'application/json', '{"__proto__":{"admin":true},"status":"SUCCESS"}'],
      ['a constructor.prototype key', 'application/json', '{"constructor":{"prototype":{"x":1}}}'],
      ['a NUL character in JSON', 'application/json', '{"status":"SUC\\u0000CESS"}'],
      ['a raw NUL character in text', 'text/plain', 'PAID\u0000'],
      ['JSON nested 1,500 deep', 'application/json', deep],
      ['50,000 keys', 'application/json', wide],
      ['a malformed form', 'application/x-www-form-urlencoded', '%%%=&&==%E0%A4%A'],
      ['a charset nobody knows', 'application/json; charset=klingon', '{"status":"SUCCESS"}'],
    ])('%s', async (_name, contentType, body) => {
      const quiet = await quietOrder(service);
      const res = await request(service.server).post(quiet.success).set('content-type', contentType).send(body);
      expect(res.status).toBe(200);
      const [stored] = await storedOf(quiet.order.id);
      expect(stored).toMatchObject({ result: 'APPLIED', orderId: quiet.order.id, outcome: 'success' });
      // Kept as text, up to 64 KiB, a NUL shown as U+FFFD.
      expect(stored.rawBody).toBe(body.slice(0, 64 * 1024).replaceAll('\u0000', '\uFFFD'));
      expect((await quiet.alice.getOrder(quiet.order.id)).body.status).toBe('SUCCEEDED');
    });

    it.each([
      ['a NUL in a query value', '&ref=a%00b', { ref: 'a\uFFFDb' }],
      ['a NUL in a query name', '&r%00f=1', { 'r\uFFFDf': '1' }],
      ['percent-encoded bytes that are not UTF-8', '&ref=%ED%A0%80x&b=%F0%9F', { ref: '%ED%A0%80x', b: '%F0%9F' }],
      // A member named __proto__ is kept as the data it is (an own member, never a prototype); it breaks nothing.
      ['a __proto__ query member', '&__proto__=x&constructor=y&toString=z', { ['__proto__']: 'x', constructor: 'y', toString: 'z' }],
    ])('%s', async (_name, suffix, expectedQuery: Record<string, string>) => {
      const quiet = await quietOrder(service);
      const res = await request(service.server).get(quiet.failure + suffix);
      expect(res.status).toBe(200);
      const [stored] = await storedOf(quiet.order.id);
      expect(stored).toMatchObject({ result: 'APPLIED', method: 'GET', outcome: 'failure' });
      expect(stored.query).toEqual({ token: '[REDACTED]', ...Object.fromEntries(Object.entries(expectedQuery)) });
      expect((await quiet.alice.getOrder(quiet.order.id)).body.status).toBe('FAILED');
    });

    it('a query of 1,200 fields (over the bound of ordinary routes) is stored whole', async () => {
      const quiet = await quietOrder(service);
      const fields = Array.from({ length: 1_200 }, (_, i) => `f${i}=${i}`).join('&');
      expect((await request(service.server).get(`${quiet.success}&${fields}`)).status).toBe(200);
      const [stored] = await storedOf(quiet.order.id);
      expect(Object.keys(stored.query as object)).toHaveLength(1_201);
      expect((await quiet.alice.getOrder(quiet.order.id)).body.status).toBe('SUCCEEDED');
    });

    it('a body over 64 KiB is kept as its first 64 KiB', async () => {
      const quiet = await quietOrder(service);
      const body = 'é'.repeat(100_000);
      expect((await request(service.server).post(quiet.success).set('content-type', 'text/plain').send(body)).status).toBe(200);
      const [stored] = await storedOf(quiet.order.id);
      expect(Buffer.byteLength(stored.rawBody!)).toBeLessThanOrEqual(64 * 1024);
      expect(stored.rawBody!.length).toBeGreaterThanOrEqual(32 * 1024 - 1);
      expect(body.startsWith(stored.rawBody!)).toBe(true);
    });
  });

  it('a signed callback over the 1 MiB body limit is still stored (its head) and applied', async () => {
    const quiet = await quietOrder(service);
    const body = JSON.stringify({ status: 'SUCCESS', padding: 'x'.repeat(3 * 1024 * 1024) });
    const res = await request(service.server).post(quiet.success).set('content-type', 'application/json').send(body);
    expect(res.status).toBe(200);
    const [stored] = await storedOf(quiet.order.id);
    expect(stored).toMatchObject({ result: 'APPLIED', rawBody: body.slice(0, 64 * 1024) });
    expect((await quiet.alice.getOrder(quiet.order.id)).body.status).toBe('SUCCEEDED');
    // Past 16 MiB a callback body is refused, and an ordinary route still refuses more than 1 MiB.
    const huge = await request(service.server)
      .post(quiet.failure)
      .set('content-type', 'text/plain')
      .send('y'.repeat(17 * 1024 * 1024));
    expect(huge.status).toBe(413);
    const ordinary = await request(service.server)
      .post('/v1/orders')
      .auth(quiet.alice.token, { type: 'bearer' })
      .set('content-type', 'text/plain')
      .send(body);
    expect(ordinary.status).toBe(413);
    expect(ordinary.headers['content-type']).toMatch(/problem\+json/);
  });

  it('query members named like secrets are redacted before they are stored', async () => {
    const quiet = await quietOrder(service);
    const secrets = '&access_token=at-1&apiKey=ak-2&X-Signature=sig-3&client_secret=cs-4&password=pw-5&sessionId=sid-6&Token=tk-7';
    expect((await request(service.server).get(quiet.success + secrets + '&ref=ord-42&status=PAID')).status).toBe(200);
    const [stored] = await storedOf(quiet.order.id);
    expect(stored.query).toEqual({
      token: '[REDACTED]',
      access_token: '[REDACTED]',
      apiKey: '[REDACTED]',
      'X-Signature': '[REDACTED]',
      client_secret: '[REDACTED]',
      password: '[REDACTED]',
      sessionId: '[REDACTED]',
      Token: '[REDACTED]',
      ref: 'ord-42',
      status: 'PAID',
    });
    expect(JSON.stringify(stored)).not.toMatch(/at-1|ak-2|sig-3|cs-4|pw-5|sid-6|tk-7/);
  });

  describe('an unsigned callback is stored in bounded form', () => {
    it('at most 1 KiB of its body, and short query and headers', async () => {
      const orderId = randomUUID();
      const longQuery = Array.from({ length: 40 }, (_, i) => `q${i}=${'v'.repeat(300)}`).join('&');
      const res = await request(service.server)
        .post(`/v1/callbacks/payin/${orderId}/success?token=wrong&${longQuery}`)
        .set('x-forwarded-for', '198.51.100.7')
        .set('x-padding', 'p'.repeat(2_000))
        .set('content-type', 'text/plain')
        .send('€'.repeat(30_000));
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      const [stored] = await storedOf(orderId);
      expect(stored).toMatchObject({ result: 'REJECTED', orderId: null });
      expect(Buffer.byteLength(stored.rawBody!)).toBeLessThanOrEqual(1024);
      expect(stored.rawBody).toBe('€'.repeat(341));
      expect(Object.keys(stored.query as object).length).toBeLessThanOrEqual(32);
      expect((stored.query as Record<string, string>).q1).toHaveLength(256);
      expect((stored.headers as Record<string, string>)['x-padding']).toHaveLength(256);
      expect(Buffer.byteLength(JSON.stringify(stored))).toBeLessThan(16 * 1024);
    });

    it('a wrong token with a 3 MiB body: 404, and 1 KiB of it stored', async () => {
      const orderId = randomUUID();
      const res = await request(service.server)
        .post(`/v1/callbacks/payin/${orderId}/failure?token=nope`)
        .set('x-forwarded-for', '198.51.100.9')
        .set('content-type', 'text/plain')
        .send('w'.repeat(3 * 1024 * 1024));
      expect(res.status).toBe(404);
      const [stored] = await storedOf(orderId);
      expect(stored).toMatchObject({ result: 'REJECTED', rawBody: 'w'.repeat(1024) });
    });

    it('a wrong token with a hostile body is stored small, changes nothing, answers 404', async () => {
      const quiet = await quietOrder(service);
      const forged = quiet.success.replace(/token=[^&]*/, 'token=' + 'A'.repeat(43));
      const res = await request(service.server)
        .post(forged)
        .set('x-forwarded-for', '198.51.100.8')
        .set('content-type', 'application/json')
        .send('{"a":'.repeat(2_000));
      expect(res.status).toBe(404);
      const [stored] = await storedOf(quiet.order.id);
      expect(stored).toMatchObject({ result: 'REJECTED', orderId: null, rawBody: '{"a":'.repeat(2_000).slice(0, 1024) });
      expect((await quiet.alice.getOrder(quiet.order.id)).body.status).toBe('PROCESSING');
    });

    it('REJECTED records are purged after 30 days; the others stay', async () => {
      const quiet = await quietOrder(service);
      expect((await request(service.server).get(quiet.success)).status).toBe(200);
      const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 3600 * 1000);
      const rejected = (receivedAt: Date) => ({
        pathOrderId: randomUUID(),
        outcome: 'success',
        result: 'REJECTED' as const,
        method: 'POST',
        query: {},
        headers: {},
        receivedAt,
      });
      const old = await service.prisma.providerCallback.create({ data: rejected(daysAgo(31)) });
      const recent = await service.prisma.providerCallback.create({ data: rejected(daysAgo(29)) });
      const [applied] = await storedOf(quiet.order.id);
      await service.prisma.providerCallback.update({ where: { id: applied.id }, data: { receivedAt: daysAgo(400) } });

      await expect(service.get(RejectedCallbackPurgeJob).runOnce()).resolves.toBeGreaterThanOrEqual(1);
      const left = await service.prisma.providerCallback.findMany({ where: { id: { in: [old.id, recent.id, applied.id] } } });
      expect(left.map((c) => c.id).sort()).toEqual([recent.id, applied.id].sort());
    });
  });
});
