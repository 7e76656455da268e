import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { REQUEST_ID_HEADER } from '../../src/create-app';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { orderRequest } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * The statement budgets of the hot paths, counted at the driver: every statement the app's pg
 * pool sends on behalf of one request (by its request id), Prisma's and the written-out ones.
 * Adding a statement to either path fails here: the budgets are exact, not ceilings.
 */
describe('statement budgets of the hot paths', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let token: string;
  const sent = new Map<string, string[]>();

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    token = await service.bearer(`budget_${randomUUID().slice(0, 8)}`);
    service.prisma.observeStatements((sql, requestId) => {
      if (requestId) sent.set(requestId, [...(sent.get(requestId) ?? []), sql]);
    });
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  const counted = async (send: (requestId: string) => Promise<request.Response>) => {
    const requestId = `budget-${randomUUID()}`;
    const response = await send(requestId);
    return { response, statements: sent.get(requestId) ?? [] };
  };
  const createOrder = (requestId: string, overrides: Record<string, unknown> = {}) =>
    request(service.server)
      .post('/v1/orders')
      .auth(token, { type: 'bearer' })
      .set(REQUEST_ID_HEADER, requestId)
      .set('Idempotency-Key', randomUUID())
      .send(orderRequest(overrides));
  const purposeOf = (sql: string) =>
    [
      [
        /INSERT INTO idempotency_records[\s\S]*INSERT INTO agent_budgets[\s\S]*INSERT INTO orders/,
        'before the call: key claimed, budget taken, order stored (with history and event)',
      ],
      [
        /UPDATE orders o SET[\s\S]*UPDATE idempotency_records\s+SET state = 'completed'/,
        'after the call: answer recorded (with history and event), idempotent answer stored',
      ],
    ].find(([pattern]) => (pattern as RegExp).test(sql))?.[1] ?? sql;
  const transactionsOf = (statements: string[]) => statements.filter((sql) => /^\s*BEGIN\b/i.test(sql)).length;

  it('GET /v1/orders/{id}: one statement (order, history and callbacks; the owner in its WHERE)', async () => {
    const created = await createOrder(randomUUID());
    expect(created.status).toBe(201);
    const { response, statements } = await counted((requestId) =>
      request(service.server).get(`/v1/orders/${created.body.id}`).auth(token, { type: 'bearer' }).set(REQUEST_ID_HEADER, requestId),
    );
    expect(response.status).toBe(200);
    expect(response.body.history.length).toBeGreaterThanOrEqual(2);
    expect(statements).toHaveLength(1);
  });

  it("GET /v1/orders/{id} of another customer's order: still one statement, and 404", async () => {
    const created = await createOrder(randomUUID());
    const stranger = await service.bearer(`stranger_${randomUUID().slice(0, 8)}`);
    const { response, statements } = await counted((requestId) =>
      request(service.server).get(`/v1/orders/${created.body.id}`).auth(stranger, { type: 'bearer' }).set(REQUEST_ID_HEADER, requestId),
    );
    expect(response.status).toBe(404);
    expect(statements).toHaveLength(1);
  });

  it('POST /v1/orders: two round trips, one before the pay-in and one after, no transaction around them, the call log not among them', async () => {
    await createOrder(randomUUID()); // the provider token is fetched once per instance, not per order
    const { response, statements } = await counted((requestId) => createOrder(requestId));
    expect(response.status).toBe(201);
    expect(response.body.status).toBe('PROCESSING');
    expect(statements.map(purposeOf)).toEqual([
      'before the call: key claimed, budget taken, order stored (with history and event)',
      'after the call: answer recorded (with history and event), idempotent answer stored',
    ]);
    expect(transactionsOf(statements)).toBe(0);
  });

  it('POST /v1/orders replayed: the stored answer, byte for byte; the order statement stores nothing, then the key is read', async () => {
    const key = randomUUID();
    const send = (requestId: string) =>
      request(service.server)
        .post('/v1/orders')
        .auth(token, { type: 'bearer' })
        .set(REQUEST_ID_HEADER, requestId)
        .set('Idempotency-Key', key)
        .send(orderRequest({ description: 'replayed "byte for byte" \u00e9' }));
    const first = await send(randomUUID());
    expect(first.status).toBe(201);
    const { response, statements } = await counted(send);
    expect(response.status).toBe(201);
    expect(response.headers['idempotent-replayed']).toBe('true');
    expect(response.text).toBe(first.text);
    // The order's statement finds the key taken and stores nothing; the usual claim then finds the record, and its read answers.
    expect(statements.map((sql) => /INSERT INTO orders/.test(sql))).toEqual([true, false, false]);
  });
});
