import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { SecretBox } from '../../src/common/secret-box';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { WebhookEndpointsService } from '../../src/webhooks/webhook-endpoints.service';
import { webhookSecretPurpose } from '../../src/webhooks/webhook-endpoints.types';
import { webhookSignatureHeader } from '../../src/webhooks/webhook-signature';
import { answerFailure, hostileBody, seedFor } from '../hostile/fuzz-arbitraries';
import { inject } from '../hostile/hostile-harness';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** Unreachable at once (connection refused) and allowed outside production: no delivery leaves the machine. */
const LOCAL_URL = 'https://127.0.0.1:9/hooks';
const SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('webhook endpoints', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  /** The production URL policy: https only, public addresses only. */
  let strict: TestService;
  let admin: string;
  let strictAdmin: string;
  let finance: string;
  let customer: string;
  const adminSub = `adm_${randomUUID().slice(0, 8)}`;
  /** Every URL and description of this file carries it: afterAll removes what the file registered. */
  const marker = `wh-e2e-${randomUUID().slice(0, 8)}`;
  const secretsSeen: string[] = [];
  const answers: string[] = [];

  const call = (on: TestService, method: 'get' | 'post' | 'patch' | 'delete', path: string, token: string | undefined, body?: unknown) => {
    let req = request(on.server)[method](path);
    if (token) req = req.auth(token, { type: 'bearer' });
    return (body === undefined ? req : req.send(body as object)).then((res) => {
      answers.push(res.text);
      return res;
    });
  };
  const create = (body: Record<string, unknown>, on = service, token = admin) => call(on, 'post', '/v1/webhook-endpoints', token, body);
  const rowOf = async (id: string) =>
    (
      await service.prisma.$queryRawUnsafe<
        { secret_encrypted: string; previous_secret_encrypted: string | null; previous_secret_until: Date | null; url: string }[]
      >('SELECT secret_encrypted, previous_secret_encrypted, previous_secret_until, url FROM webhook_endpoints WHERE id = $1::uuid', id)
    )[0];
  const endpointCount = async () =>
    Number(
      (
        await service.prisma.$queryRawUnsafe<{ n: bigint }[]>(
          'SELECT count(*) AS n FROM webhook_endpoints WHERE url LIKE $1',
          `%${marker}%`,
        )
      )[0].n,
    );
  const auditOf = (id: string) => service.prisma.auditEvent.findMany({ where: { resourceId: id }, orderBy: { at: 'asc' } });
  const registered = async (overrides: Record<string, unknown> = {}) => {
    const res = await create({ url: `${LOCAL_URL}/${marker}`, events: ['order.review_needed'], description: marker, ...overrides });
    expect(res.status).toBe(201);
    secretsSeen.push(res.body.secret);
    return res.body as { id: string; secret: string; url: string };
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    strict = await startTestService(sandbox, { WEBHOOK_ALLOW_INSECURE_URLS: 'false', WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
    admin = await service.bearer(adminSub, 'admin');
    strictAdmin = await strict.bearer(adminSub, 'admin');
    finance = await service.bearer(`fin_${randomUUID().slice(0, 8)}`, 'finance');
    customer = await service.bearer(`cust_${randomUUID().slice(0, 8)}`);
  });
  afterAll(async () => {
    await service?.prisma.$executeRawUnsafe(
      'DELETE FROM webhook_endpoints WHERE url LIKE $1 OR description LIKE $1 OR url = $2',
      `%${marker}%`,
      'https://93.184.216.34/hooks',
    );
    await strict?.close();
    await service?.close();
    await sandbox?.close();
  });

  describe('CRUD', () => {
    it('registers an endpoint: 201 with the secret, shown this once', async () => {
      const res = await create({
        url: `${LOCAL_URL}/${marker}`,
        events: ['order.succeeded', 'order.failed', 'order.succeeded'],
        description: ' ERP ',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        url: `${LOCAL_URL}/${marker}`,
        events: ['order.succeeded', 'order.failed'],
        description: 'ERP',
        status: 'ENABLED',
        disabledReason: null,
        secret: expect.stringMatching(SECRET_PATTERN),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      secretsSeen.push(res.body.secret);

      const got = await call(service, 'get', `/v1/webhook-endpoints/${res.body.id}`, admin);
      expect(got.status).toBe(200);
      const { secret: _secret, ...shown } = res.body;
      expect(got.body).toEqual(shown);
      expect(got.text).not.toContain(res.body.secret);
    });

    it('without events: every type (stored and answered as an empty list); no description: null', async () => {
      const res = await create({ url: `${LOCAL_URL}/${marker}/all` });
      expect(res.status).toBe(201);
      secretsSeen.push(res.body.secret);
      expect(res.body).toMatchObject({ events: [], description: null, status: 'ENABLED' });
    });

    it('lists newest first, page by page, without secrets', async () => {
      const mine = [await registered(), await registered(), await registered()];
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 50; page++) {
        const res = await call(service, 'get', `/v1/webhook-endpoints?limit=2${cursor ? `&cursor=${cursor}` : ''}`, admin);
        expect(res.status).toBe(200);
        for (const item of res.body.items) expect(item).not.toHaveProperty('secret');
        seen.push(...res.body.items.map((item: { id: string }) => item.id));
        cursor = res.body.nextCursor ?? undefined;
        if (!cursor) break;
      }
      const positions = mine.map((m) => seen.indexOf(m.id));
      expect(positions.every((p) => p >= 0)).toBe(true);
      expect(positions).toEqual([...positions].sort((a, b) => b - a));
      expect(new Set(seen).size).toBe(seen.length);

      const disabled = await call(service, 'patch', `/v1/webhook-endpoints/${mine[1].id}`, admin, { status: 'DISABLED' });
      expect(disabled.status).toBe(200);
      const onlyDisabled = await call(service, 'get', '/v1/webhook-endpoints?status=DISABLED&limit=200', admin);
      expect(onlyDisabled.body.items.map((i: { status: string }) => i.status)).not.toContain('ENABLED');
      expect(onlyDisabled.body.items.map((i: { id: string }) => i.id)).toContain(mine[1].id);
      expect((await call(service, 'get', '/v1/webhook-endpoints?status=PAUSED', admin)).status).toBe(400);
    });

    it('PATCH changes what it names and nothing else; DISABLED carries a reason, ENABLED clears it', async () => {
      const endpoint = await registered({ description: `first ${marker}` });
      const events = await call(service, 'patch', `/v1/webhook-endpoints/${endpoint.id}`, admin, { events: ['distribution.accepted'] });
      expect(events.status).toBe(200);
      expect(events.body).toMatchObject({ events: ['distribution.accepted'], description: `first ${marker}`, url: endpoint.url });

      const off = await call(service, 'patch', `/v1/webhook-endpoints/${endpoint.id}`, admin, { status: 'DISABLED', description: null });
      expect(off.body).toMatchObject({ status: 'DISABLED', disabledReason: 'Disabled by an administrator.', description: null });
      const on = await call(service, 'patch', `/v1/webhook-endpoints/${endpoint.id}`, admin, {
        status: 'ENABLED',
        url: `${LOCAL_URL}/${marker}/moved`,
      });
      expect(on.body).toMatchObject({
        status: 'ENABLED',
        disabledReason: null,
        url: `${LOCAL_URL}/${marker}/moved`,
        events: ['distribution.accepted'],
      });
      expect(on.text).not.toContain('whsec_');

      const all = await call(service, 'patch', `/v1/webhook-endpoints/${endpoint.id}`, admin, { events: [] });
      expect(all.body.events).toEqual([]);
      for (const body of [
        { url: null },
        { status: null },
        { events: null },
        { status: 'PAUSED' },
        { events: 'order.failed' },
        { secret: 'whsec_x' },
      ])
        expect([body, (await call(service, 'patch', `/v1/webhook-endpoints/${endpoint.id}`, admin, body)).status]).toEqual([body, 400]);
    });

    it('DELETE answers 204 and takes the deliveries with it; then 404', async () => {
      const endpoint = await registered();
      const eventId = `evt_${randomUUID().replace(/-/g, '')}`;
      // An event of the endpoint's type: the trigger fans it out; only this endpoint's delivery is kept (others never see it).
      await service.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(
          `INSERT INTO events (id, type, resource_type, resource_id, snapshot, created_at) VALUES ($1, 'order.review_needed', 'order', $2::uuid, '{}'::jsonb, now())`,
          eventId,
          randomUUID(),
        );
        await tx.$executeRawUnsafe('DELETE FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id <> $2::uuid', eventId, endpoint.id);
      });
      const deliveries = () =>
        service.prisma.$queryRawUnsafe<{ n: bigint }[]>(
          'SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = $1::uuid',
          endpoint.id,
        );
      expect(Number((await deliveries())[0].n)).toBe(1);

      const res = await call(service, 'delete', `/v1/webhook-endpoints/${endpoint.id}`, admin);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(Number((await deliveries())[0].n)).toBe(0);
      await service.prisma.$executeRawUnsafe('DELETE FROM events WHERE id = $1', eventId);
      for (const [method, path] of [
        ['get', `/v1/webhook-endpoints/${endpoint.id}`],
        ['delete', `/v1/webhook-endpoints/${endpoint.id}`],
        ['patch', `/v1/webhook-endpoints/${endpoint.id}`],
        ['post', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`],
        ['get', '/v1/webhook-endpoints/not-a-uuid'],
        ['delete', '/v1/webhook-endpoints/not-a-uuid'],
        ['post', '/v1/webhook-endpoints/not-a-uuid/rotate-secret'],
      ] as const) {
        const answer = await call(service, method, path, admin, method === 'patch' ? { description: 'x' } : undefined);
        expect([method, path, answer.status, answer.body.code]).toEqual([method, path, 404, 'not_found']);
      }
    });
  });

  it('admin only: finance and customers 403, no token 401', async () => {
    const endpoint = await registered();
    const routes = [
      ['post', '/v1/webhook-endpoints', { url: `${LOCAL_URL}/${marker}` }],
      ['get', '/v1/webhook-endpoints', undefined],
      ['get', `/v1/webhook-endpoints/${endpoint.id}`, undefined],
      ['patch', `/v1/webhook-endpoints/${endpoint.id}`, { status: 'DISABLED' }],
      ['delete', `/v1/webhook-endpoints/${endpoint.id}`, undefined],
      ['post', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, undefined],
    ] as const;
    const before = await endpointCount();
    for (const [method, path, body] of routes) {
      for (const [who, token, status] of [
        ['finance', finance, 403],
        ['customer', customer, 403],
        ['nobody', undefined, 401],
      ] as const) {
        const res = await call(service, method, path, token, body);
        expect([who, method, path, res.status]).toEqual([who, method, path, status]);
      }
    }
    expect(await endpointCount()).toBe(before);
    expect((await call(service, 'get', `/v1/webhook-endpoints/${endpoint.id}`, admin)).body.status).toBe('ENABLED');
    expect(await auditOf(endpoint.id)).toHaveLength(1);
  });

  it('the stored secret is sealed (SecretBox, bound to the endpoint), never the secret itself', async () => {
    const endpoint = await registered();
    const row = await rowOf(endpoint.id);
    expect(row.secret_encrypted).not.toContain(endpoint.secret);
    expect(row.secret_encrypted).not.toContain(endpoint.secret.slice('whsec_'.length, 20));
    expect(row.secret_encrypted).toMatch(/^v2\./);
    const box = new SecretBox(service.config.dataEncryptionKey);
    expect(box.decrypt(row.secret_encrypted, webhookSecretPurpose(endpoint.id))).toBe(endpoint.secret);
    // Bound to its row: another endpoint's purpose does not open it.
    expect(() => box.decrypt(row.secret_encrypted, webhookSecretPurpose(randomUUID()))).toThrow();
    expect(row.previous_secret_encrypted).toBeNull();
  });

  describe('rotation', () => {
    const body = JSON.stringify({ id: 'evt_rotation', type: 'order.succeeded', data: { amount: '1500' } });
    const verifies = (secret: string, signature: string, timestamp: number) => {
      try {
        new Webhook(secret).verify(body, {
          'webhook-id': 'evt_rotation',
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signature,
        });
        return true;
      } catch {
        return false;
      }
    };

    it('both secrets sign for 24 hours (database clock), then only the new one', async () => {
      const endpoint = await registered();
      const endpoints = service.get(WebhookEndpointsService);
      expect((await endpoints.signingTarget(endpoint.id))?.secrets).toEqual([endpoint.secret]);

      const rotated = await call(service, 'post', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, admin);
      expect(rotated.status).toBe(200);
      expect(rotated.body).toEqual({ secret: expect.stringMatching(SECRET_PATTERN), previousSecretUntil: expect.any(String) });
      const fresh: string = rotated.body.secret;
      secretsSeen.push(fresh);
      expect(fresh).not.toBe(endpoint.secret);
      const hours = (Date.parse(rotated.body.previousSecretUntil) - Date.now()) / 3_600_000;
      expect(hours).toBeGreaterThan(23.9);
      expect(hours).toBeLessThan(24.1);

      const row = await rowOf(endpoint.id);
      expect(row.previous_secret_until?.toISOString()).toBe(rotated.body.previousSecretUntil);
      for (const secret of [endpoint.secret, fresh]) {
        expect(row.secret_encrypted).not.toContain(secret);
        expect(row.previous_secret_encrypted).not.toContain(secret);
      }

      const during = await endpoints.signingTarget(endpoint.id);
      expect(during).toEqual({ id: endpoint.id, url: endpoint.url, status: 'ENABLED', secrets: [fresh, endpoint.secret] });
      const now = Math.floor(Date.now() / 1000);
      const both = webhookSignatureHeader(during!.secrets, 'evt_rotation', now, body);
      expect(verifies(fresh, both, now)).toBe(true);
      expect(verifies(endpoint.secret, both, now)).toBe(true);

      // The 24 hours have passed.
      await service.prisma.$executeRawUnsafe(
        "UPDATE webhook_endpoints SET previous_secret_until = now() - interval '1 second' WHERE id = $1::uuid",
        endpoint.id,
      );
      const after = await endpoints.signingTarget(endpoint.id);
      expect(after?.secrets).toEqual([fresh]);
      const one = webhookSignatureHeader(after!.secrets, 'evt_rotation', now, body);
      expect(verifies(fresh, one, now)).toBe(true);
      expect(verifies(endpoint.secret, one, now)).toBe(false);

      const got = await call(service, 'get', `/v1/webhook-endpoints/${endpoint.id}`, admin);
      expect(got.text).not.toContain(fresh);
      expect(got.text).not.toContain(endpoint.secret);
    });

    it('a second rotation within the 24 hours keeps only the secret it replaces beside the new one', async () => {
      const endpoint = await registered();
      const first = (await call(service, 'post', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, admin)).body.secret as string;
      const second = (await call(service, 'post', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, admin)).body.secret as string;
      secretsSeen.push(first, second);
      expect((await service.get(WebhookEndpointsService).signingTarget(endpoint.id))?.secrets).toEqual([second, first]);
    });

    it('signingTarget of an endpoint that does not exist: undefined', async () => {
      expect(await service.get(WebhookEndpointsService).signingTarget(randomUUID())).toBeUndefined();
    });
  });

  describe('URL policy (WEBHOOK_ALLOW_INSECURE_URLS=false, WEBHOOK_ALLOW_PRIVATE_URLS=false)', () => {
    it.each([
      ['http://', `http://93.184.216.34/${marker}`],
      ['loopback', `https://127.0.0.1/${marker}`],
      ['localhost (resolves to loopback)', `https://localhost/${marker}`],
      ['cloud metadata', `https://169.254.169.254/latest/meta-data/${marker}`],
      ['IPv6 loopback', `https://[::1]/${marker}`],
      ['private', `https://10.0.0.7/${marker}`],
      ['IPv4-mapped loopback', `https://[::ffff:127.0.0.1]/${marker}`],
      ['IPv4-compatible loopback (hex)', `https://[::7f00:1]/${marker}`],
      ['IPv4-compatible loopback (dotted)', `https://[::127.0.0.1]/${marker}`],
      ['cloud metadata through NAT64', `https://[64:ff9b::a9fe:a9fe]/${marker}`],
      ['private through 6to4', `https://[2002:a00:7::1]/${marker}`],
      ['credentials', `https://user:pass@93.184.216.34/${marker}`],
      ['not a URL', `hooks ${marker}`],
    ])('refuses %s at registration: 400 webhook_url_not_allowed on url, nothing stored', async (_name, url) => {
      const before = await endpointCount();
      const res = await create({ url, description: marker }, strict, strictAdmin);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        code: 'webhook_url_not_allowed',
        status: 400,
        errors: [{ field: 'url', message: expect.any(String) }],
      });
      expect(await endpointCount()).toBe(before);
    });

    it('refuses them on PATCH of the url too, the endpoint unchanged; accepts a public https URL', async () => {
      const accepted = await create(
        { url: 'https://93.184.216.34/hooks', events: ['order.review_needed'], description: marker },
        strict,
        strictAdmin,
      );
      expect(accepted.status).toBe(201);
      const id: string = accepted.body.id;
      try {
        for (const url of [
          'http://93.184.216.34/hooks',
          'https://127.0.0.1/hooks',
          'https://localhost/hooks',
          'https://169.254.169.254/',
          'https://[::1]/',
        ]) {
          const res = await call(strict, 'patch', `/v1/webhook-endpoints/${id}`, strictAdmin, { url, description: 'changed' });
          expect([url, res.status, res.body.code, res.body.errors?.[0]?.field]).toEqual([url, 400, 'webhook_url_not_allowed', 'url']);
        }
        const got = await call(strict, 'get', `/v1/webhook-endpoints/${id}`, strictAdmin);
        expect(got.body).toMatchObject({ url: 'https://93.184.216.34/hooks', description: marker });
        expect(await auditOf(id)).toHaveLength(1);
      } finally {
        expect((await call(strict, 'delete', `/v1/webhook-endpoints/${id}`, strictAdmin)).status).toBe(204);
      }
    });

    it('outside production (the defaults) http:// and loopback are accepted', async () => {
      const res = await create({ url: `http://127.0.0.1:9/${marker}`, events: ['order.review_needed'] });
      expect(res.status).toBe(201);
      secretsSeen.push(res.body.secret);
    });
  });

  it('unknown event types: 400 validation_failed naming them, nothing stored', async () => {
    const before = await endpointCount();
    const res = await create({ url: `${LOCAL_URL}/${marker}`, events: ['order.succeeded', 'order.refunded', 7] });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toEqual([{ field: 'events', message: expect.stringContaining('events[1] "order.refunded"') }]);
    expect(res.body.errors[0].message).toContain('events[2] is not a string');
    const both = await create({ url: 'ftp://x', events: ['nope'], description: 5 });
    expect(both.status).toBe(400);
    expect([...new Set(both.body.errors.map((e: { field: string }) => e.field))].sort()).toEqual(['description', 'events']);
    expect(await endpointCount()).toBe(before);
  });

  it('every change is audited in its transaction: created, updated (what changed, the URL as its origin), secret_rotated, deleted', async () => {
    const endpoint = await registered({ url: `${LOCAL_URL}/${marker}/path?token=receiver-token-123` });
    await call(service, 'patch', `/v1/webhook-endpoints/${endpoint.id}`, admin, {
      status: 'DISABLED',
      url: `https://127.0.0.2:9/${marker}`,
    });
    await call(service, 'post', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, admin);
    await call(service, 'delete', `/v1/webhook-endpoints/${endpoint.id}`, admin);
    const rows = await auditOf(endpoint.id);
    expect(rows.map((r) => [r.action, r.resourceType, r.actor])).toEqual([
      ['webhook_endpoint.created', 'webhook_endpoint', adminSub],
      ['webhook_endpoint.updated', 'webhook_endpoint', adminSub],
      ['webhook_endpoint.secret_rotated', 'webhook_endpoint', adminSub],
      ['webhook_endpoint.deleted', 'webhook_endpoint', adminSub],
    ]);
    expect(rows[0].details).toEqual({ urlOrigin: 'https://127.0.0.1:9', events: ['order.review_needed'] });
    expect(rows[1].details).toEqual({
      changed: ['url', 'status'],
      url: { from: 'https://127.0.0.1:9', to: 'https://127.0.0.2:9' },
      status: { from: 'ENABLED', to: 'DISABLED' },
    });
    expect(rows.every((r) => typeof r.requestId === 'string')).toBe(true);
    const trail = JSON.stringify(rows);
    expect(trail).not.toContain('receiver-token-123');
    expect(trail).not.toContain('whsec_');

    // A refused change writes no audit event.
    const other = await registered();
    await call(service, 'patch', `/v1/webhook-endpoints/${other.id}`, admin, { events: ['nope'] });
    expect(await auditOf(other.id)).toHaveLength(1);
  });

  describe('fuzz: hostile bodies are never a 500 and never a partial write', () => {
    const FUZZ_CASES = 300;
    const check = async (method: 'POST' | 'PATCH', url: string, payload: string) => {
      const answer = await inject(service, { method, url, token: admin, payload });
      const failure = answerFailure(answer, 0);
      if (failure) throw new Error(`${method} ${url} body ${JSON.stringify(payload.slice(0, 300))}: ${failure}`);
      if (answer.status < 300) expect(answer.raw.includes('whsec_')).toBe(method === 'POST');
      if (method === 'POST' && answer.status === 201) secretsSeen.push(answer.body.secret);
      return answer;
    };

    it('POST /v1/webhook-endpoints', async () => {
      const valid = () => ({ url: `${LOCAL_URL}/${marker}/fuzz`, events: ['order.review_needed', 'order.failed'], description: marker });
      await fc.assert(
        fc.asyncProperty(hostileBody(valid), (payload) => check('POST', '/v1/webhook-endpoints', payload).then(() => undefined)),
        { numRuns: FUZZ_CASES, seed: seedFor('webhook-endpoints POST') },
      );
    }, 300_000);

    it('PATCH /v1/webhook-endpoints/{id}: a refusal leaves the endpoint as it was', async () => {
      const endpoint = await registered();
      const valid = () => ({
        url: `${LOCAL_URL}/${marker}/fuzz`,
        events: ['order.review_needed'],
        description: marker,
        status: 'DISABLED',
      });
      await fc.assert(
        fc.asyncProperty(hostileBody(valid), async (payload) => {
          const before = (await call(service, 'get', `/v1/webhook-endpoints/${endpoint.id}`, admin)).body;
          const answer = await check('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, payload);
          if (answer.status >= 400)
            expect((await call(service, 'get', `/v1/webhook-endpoints/${endpoint.id}`, admin)).body).toEqual(before);
        }),
        { numRuns: FUZZ_CASES, seed: seedFor('webhook-endpoints PATCH') },
      );
    }, 300_000);
  });

  it('no secret reached an answer other than its own creation or rotation, nor a log line', () => {
    const logs = service.logs.text + strict.logs.text;
    expect(secretsSeen.length).toBeGreaterThan(10);
    for (const secret of secretsSeen) {
      expect(logs).not.toContain(secret);
      expect(logs).not.toContain(secret.slice('whsec_'.length));
      expect(answers.filter((text) => text.includes(secret)).length).toBeLessThanOrEqual(1);
    }
  });
});
