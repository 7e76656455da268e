import { Client } from 'pg';
import { ADVISORY_LOCKS } from '../../src/database/advisory-locks';
import { CallbacksRepository } from '../../src/callbacks/callbacks.repository';
import { IdempotencyRepository } from '../../src/idempotency/idempotency.repository';
import { OrderExpiryJob } from '../../src/orders/order-expiry.job';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { testDatabaseUrl } from '../support/test-database';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * Leadership between instances, proven with a second session holding the lock as another
 * instance would. Runs only on a real PostgreSQL server (jest.config.js): the embedded PGlite is
 * a single session, where every advisory lock is granted to everyone.
 */
describe('jobs run by one instance at a time', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let other: Client;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
  });
  beforeEach(async () => {
    other = new Client({ connectionString: testDatabaseUrl() });
    await other.connect();
    await other.query('BEGIN');
  });
  afterEach(async () => {
    await other.query('ROLLBACK').catch(() => undefined);
    await other.end();
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  it('the idempotency purge is left to the instance holding its lock', async () => {
    await other.query('SELECT pg_advisory_xact_lock($1::bigint)', [ADVISORY_LOCKS.idempotencyPurge]);
    expect(await service.get(IdempotencyRepository).tryPurgeAsLeader()).toEqual({ leader: false, purged: 0 });
    await other.query('COMMIT');
    expect((await service.get(IdempotencyRepository).tryPurgeAsLeader()).leader).toBe(true);
  });

  it('the rejected-callback purge is left to the instance holding its lock', async () => {
    await other.query('SELECT pg_advisory_xact_lock($1::bigint)', [ADVISORY_LOCKS.rejectedCallbackPurge]);
    expect(await service.get(CallbacksRepository).tryPurgeRejectedAsLeader(30, 10)).toEqual({ leader: false, purged: 0 });
    await other.query('COMMIT');
    expect((await service.get(CallbacksRepository).tryPurgeRejectedAsLeader(30, 10)).leader).toBe(true);
  });

  it('the order sweep is skipped while another instance sweeps', async () => {
    const order = await service.prisma.order.create({
      data: {
        reference: `ord_lock_${Date.now()}`,
        customerId: 'lock-test',
        amount: '10',
        currency: 'XAF',
        service: 1,
        wallet: '237600000006',
        description: 'd',
        payer: 'p',
        payerEmail: 'p@example.com',
        status: 'PROCESSING',
        processingSince: new Date(Date.now() - 3 * 86_400_000),
      },
    });
    await other.query('SELECT pg_advisory_xact_lock($1::bigint)', [ADVISORY_LOCKS.orderSweep]);
    expect(await service.get(OrderExpiryJob).sweepNow()).toBe(0);
    expect((await service.prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('PROCESSING');
    await other.query('COMMIT');
    expect(await service.get(OrderExpiryJob).sweepNow()).toBeGreaterThanOrEqual(1);
    expect((await service.prisma.order.findUniqueOrThrow({ where: { id: order.id } })).status).toBe('EXPIRED');
  });
});
