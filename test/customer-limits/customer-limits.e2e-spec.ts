import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { databaseOfItsOwn } from '../support/database-of-its-own';
import { customer } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

const DEFAULT_LIMIT = 3;
const AGENT_LIMIT = 100;

describe('customer limits: GET, PUT, DELETE /v1/customer-limits/{subject}', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let admin: string;
  let finance: string;
  let database: { url: string; drop: () => Promise<void> };
  beforeAll(async () => {
    // Its own database: the merchant-wide budget of AGENT_LIMIT calls is counted per database, and
    // the worker's database carries the calls of every file that ran in it before this one.
    database = await databaseOfItsOwn('customer_limits');
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, {
      DATABASE_URL: database.url,
      PROVIDER_CUSTOMER_HOURLY_LIMIT: String(DEFAULT_LIMIT),
      PROVIDER_AGENT_HOURLY_LIMIT: String(AGENT_LIMIT),
    });
    admin = await service.bearer(`admin_${randomUUID().slice(0, 6)}`, 'admin');
    finance = await service.bearer(`fin_${randomUUID().slice(0, 6)}`, 'finance');
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
    await database?.drop();
  });

  const http = () => request(service.server);
  const get = (subject: string, token = finance) =>
    http()
      .get(`/v1/customer-limits/${encodeURIComponent(subject)}`)
      .auth(token, { type: 'bearer' });
  const put = (subject: string, body: unknown, token = admin) =>
    http()
      .put(`/v1/customer-limits/${encodeURIComponent(subject)}`)
      .auth(token, { type: 'bearer' })
      .send(body as object);
  const del = (subject: string, token = admin) =>
    http()
      .delete(`/v1/customer-limits/${encodeURIComponent(subject)}`)
      .auth(token, { type: 'bearer' });
  const auditOf = (subject: string) =>
    service.prisma.auditEvent.findMany({ where: { resourceType: 'customer', resourceId: subject }, orderBy: { at: 'asc' } });

  it('a customer never seen: the default, 0 used; its pay-ins are counted', async () => {
    const buyer = await customer(service);
    expect((await get(buyer.sub)).body).toEqual({
      subject: buyer.sub,
      providerCallsPerHour: DEFAULT_LIMIT,
      source: 'default',
      usedInLastHour: 0,
    });
    expect((await buyer.createOrder({ amount: '100' })).status).toBe(201);
    expect((await get(buyer.sub)).body.usedInLastHour).toBe(1);
  });

  it('roles: finance and admin read; only admin sets and clears; a customer does neither', async () => {
    const buyer = await customer(service);
    expect((await get(buyer.sub, admin)).status).toBe(200);
    expect((await get(buyer.sub, buyer.token)).status).toBe(403);
    expect((await put(buyer.sub, { providerCallsPerHour: 10, note: 'n' }, finance)).status).toBe(403);
    expect((await put(buyer.sub, { providerCallsPerHour: 10, note: 'n' }, buyer.token)).status).toBe(403);
    expect((await del(buyer.sub, finance)).status).toBe(403);
    expect((await http().get(`/v1/customer-limits/${buyer.sub}`)).status).toBe(401);
    expect(await auditOf(buyer.sub)).toHaveLength(0);
  });

  it('validation: problem+json field by field, nothing stored', async () => {
    const subject = `cust_${randomUUID().slice(0, 8)}`;
    const both = await put(subject, { providerCallsPerHour: -1 });
    expect(both.status).toBe(400);
    expect(both.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(both.body.code).toBe('validation_failed');
    expect([...new Set(both.body.errors.map((e: { field: string }) => e.field))].sort()).toEqual(['note', 'providerCallsPerHour']);
    for (const bad of [1.5, '10', null, AGENT_LIMIT + 1]) {
      const answer = await put(subject, { providerCallsPerHour: bad, note: 'raise' });
      expect(answer.status).toBe(400);
      expect(new Set(answer.body.errors.map((e: { field: string }) => e.field))).toEqual(new Set(['providerCallsPerHour']));
    }
    expect((await put(subject, { providerCallsPerHour: 5, note: '   ' })).body.errors[0].field).toBe('note');
    expect((await put(subject, { providerCallsPerHour: 5, note: 'x'.repeat(501) })).status).toBe(400);
    expect((await get('a\u0000b')).body.errors).toEqual([{ field: 'subject', message: 'subject must not contain NUL characters' }]);
    expect((await put('a'.repeat(101), { providerCallsPerHour: 5, note: 'n' })).body.code).toBe('uri_too_long');
    expect((await get(subject)).body.source).toBe('default');
    expect(await auditOf(subject)).toHaveLength(0);
  });

  it('an override of 0 blocks the customer (no provider call); DELETE returns to the default; both audited', async () => {
    const buyer = await customer(service);
    const set = await put(buyer.sub, { providerCallsPerHour: 0, note: 'chargeback investigation OPS-77' });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ subject: buyer.sub, providerCallsPerHour: 0, source: 'override', usedInLastHour: 0 });
    const sent = sandbox.state.payIns.size;
    const refused = await buyer.createOrder({ amount: '100' });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('customer_limit_reached');
    expect(sandbox.state.payIns.size).toBe(sent);

    const raised = await put(buyer.sub, { providerCallsPerHour: AGENT_LIMIT, note: 'cleared' });
    expect(raised.body.providerCallsPerHour).toBe(AGENT_LIMIT);
    const cleared = await del(buyer.sub);
    expect(cleared.status).toBe(200);
    expect(cleared.body).toEqual({ subject: buyer.sub, providerCallsPerHour: DEFAULT_LIMIT, source: 'default', usedInLastHour: 0 });
    expect((await del(buyer.sub)).body.source).toBe('default');
    expect((await buyer.createOrder({ amount: '100' })).status).toBe(201);

    const audit = await auditOf(buyer.sub);
    expect(audit.map((e) => [e.action, e.note, e.details])).toEqual([
      ['customer_limit.set', 'chargeback investigation OPS-77', { providerCallsPerHour: 0, previousOverride: null }],
      ['customer_limit.set', 'cleared', { providerCallsPerHour: AGENT_LIMIT, previousOverride: 0 }],
      ['customer_limit.cleared', null, { previousOverride: AGENT_LIMIT }],
    ]);
    expect(audit.every((e) => e.actor.startsWith('admin_'))).toBe(true);
  });

  it('the metric counts customers by share used, without naming any', async () => {
    const buyer = await customer(service);
    for (let i = 0; i < DEFAULT_LIMIT; i++) expect((await buyer.createOrder({ amount: '100' })).status).toBe(201);
    const metrics = await http().get('/metrics');
    expect(metrics.text).toMatch(/provider_customer_budget_customers\{share_used="at_limit"\} [1-9]/);
    expect(metrics.text).toMatch(/provider_customer_budget_highest_share 1/);
    expect(metrics.text).not.toContain(buyer.sub);
  });
});
