import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { RejectedCallbackPurgeJob } from '../../src/callbacks/rejected-callback-purge.job';
import { REQUEST_ID_HEADER } from '../../src/create-app';
import { registeredStatements } from '../../src/database/sql-statement';
import { IdempotencyPurgeJob } from '../../src/idempotency/idempotency-purge.job';
import { IdempotencyRepository } from '../../src/idempotency/idempotency.repository';
import { OrderExpiryJob } from '../../src/orders/order-expiry.job';
import { OrdersRepository } from '../../src/orders/orders.repository';
import { AgentBudgetSweepJob } from '../../src/provider/agent-budget-sweep.job';
import { ProviderCallLog } from '../../src/provider/provider-call-log';
import { InterruptedOperationsSweepJob } from '../../src/provider-operations/interrupted-operations-sweep.job';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { orderRequest } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * Prisma's query compiler (WebAssembly, tens of MB of RSS) is loaded by Prisma's first query or
 * `$connect`, from this module. A jest mock of it records every load; it stays the real module.
 */
const mockCompilerLoads: string[] = [];
jest.mock('@prisma/client/runtime/query_compiler_fast_bg.postgresql.wasm-base64.js', () => {
  mockCompilerLoads.push(new Error('query compiler loaded').stack ?? '');
  return jest.requireActual('@prisma/client/runtime/query_compiler_fast_bg.postgresql.wasm-base64.js');
});

/** The statements of `Database.inTransaction` itself, around written-out ones. */
const TRANSACTION_CONTROL = /^(BEGIN|COMMIT|ROLLBACK|SET LOCAL statement_timeout = \d+)$/;

/** Every job an instance runs on a timer, each run once as its scheduler would. */
const BACKGROUND_JOBS: [string, (service: TestService) => Promise<unknown>][] = [
  ['idempotency purge', (s) => s.get(IdempotencyPurgeJob).runOnce()],
  ['rejected-callback purge', (s) => s.get(RejectedCallbackPurgeJob).runOnce()],
  ['interrupted operations sweep (card operations, distributions)', (s) => s.get(InterruptedOperationsSweepJob).sweepNow()],
  ['agent-budget sweep', (s) => s.get(AgentBudgetSweepJob).runNow()],
  ['provider call log write', (s) => s.get(ProviderCallLog).flush()],
  ['order sweep', (s) => s.get(OrderExpiryJob).sweepNow()],
  ['orders-by-status gauge', (s) => s.get(OrdersRepository).countByStatus()],
  ['order streams catch-up', (s) => s.get(OrdersRepository).changesAfter([{ orderId: randomUUID(), afterChangeId: 0n }])],
];

describe("an instance serving only the hot paths and its background jobs never loads Prisma's query compiler", () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let token: string;
  /** Every statement sent through the app's pool that is neither a written-out one nor transaction control: Prisma's. */
  const notWrittenOut: string[] = [];

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    token = await service.bearer(`idle_${randomUUID().slice(0, 8)}`);
    service.prisma.observeStatements((sql) => {
      // Read at each statement: a repository module loaded late registers its statements late.
      const written = new Set(registeredStatements().map((s) => s.text));
      if (!written.has(sql) && !TRANSACTION_CONTROL.test(sql.trim())) notWrittenOut.push(sql);
    });
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  const postOrder = (key: string, body: Record<string, unknown> = orderRequest()) =>
    request(service.server)
      .post('/v1/orders')
      .auth(token, { type: 'bearer' })
      .set(REQUEST_ID_HEADER, randomUUID())
      .set('Idempotency-Key', key)
      .send(body);

  it('POST /v1/orders (with its provider token, a replay and a refused body), GET /v1/orders/{id}, readiness and every background job', async () => {
    const key = randomUUID();
    const order = orderRequest();
    const created = await postOrder(key, order);
    expect(created.status).toBe(201);
    const replayed = await postOrder(key, order);
    expect([replayed.status, replayed.headers['idempotent-replayed']]).toEqual([201, 'true']);
    expect((await postOrder(randomUUID(), { amount: 'not money' })).status).toBe(400);
    const read = await request(service.server).get(`/v1/orders/${created.body.id}`).auth(token, { type: 'bearer' });
    expect(read.status).toBe(200);
    expect((await request(service.server).get('/health/ready')).status).toBe(200);

    // The idempotency interceptor renews the lease of a running request on a timer (a third of the lease).
    const idempotency = service.get(IdempotencyRepository);
    const claim = await idempotency.insertOrGet({
      userId: 'idle',
      scope: 'orders.create',
      key: randomUUID(),
      requestHash: 'h',
      ttlSeconds: 60,
      leaseMs: 60_000,
    });
    if (!claim.created) throw new Error('a fresh key must be claimed');
    expect(await idempotency.renewLease(claim.record, 60_000)).toBe(true);

    for (const [name, run] of BACKGROUND_JOBS) await expect(run(service).then(() => name)).resolves.toBe(name);

    expect({ notWrittenOut, compilerLoads: mockCompilerLoads }).toEqual({ notWrittenOut: [], compilerLoads: [] });
  });
});
