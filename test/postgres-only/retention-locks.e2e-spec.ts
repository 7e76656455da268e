import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ADVISORY_LOCKS } from '../../src/database/advisory-locks';
import { registeredStatements } from '../../src/database/sql-statement';
import { ProviderCallLog } from '../../src/provider/provider-call-log';
import { RetentionRepository } from '../../src/retention/retention.repository';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { databaseOfItsOwn } from '../support/database-of-its-own';
import { customer } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * The retention job against a second session, on a real PostgreSQL server (jest.config.js): one
 * instance prunes at a time, and a batch that holds its locks (not yet committed) never holds up a
 * pay-in, whose order, history, events, deliveries and call log are inserted meanwhile.
 */
describe('the retention job beside the pay-in', () => {
  let sandbox: RunningSandbox;
  let database: { url: string; drop: () => Promise<void> };
  let service: TestService;
  let other: Client;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    // Its own: an ENABLED endpoint (every event fans out to it) would be delivered to by the other files' services.
    database = await databaseOfItsOwn('retention_locks');
    service = await startTestService(sandbox, { DATABASE_URL: database.url, WEBHOOK_RETRY_SCHEDULE: '3600' });
  });
  beforeEach(async () => {
    other = new Client({ connectionString: database.url });
    await other.connect();
    await other.query('BEGIN');
  });
  afterEach(async () => {
    await other.query('ROLLBACK').catch(() => undefined);
    await other.end();
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
    await database?.drop();
  });

  const sql = (text: string, ...values: unknown[]) => service.prisma.$executeRawUnsafe(text, ...values);
  const statement = (name: string) => registeredStatements().find((s) => s.name === name)!.text;

  it('is left to the instance holding its lock', async () => {
    await other.query('SELECT pg_advisory_xact_lock($1::bigint)', [ADVISORY_LOCKS.dataRetention]);
    const repository = service.get(RetentionRepository);
    expect(await repository.pruneBatchAsLeader('provider_calls', 90, 10)).toEqual({ leader: false, deleted: {}, full: false });
    await other.query('COMMIT');
    expect((await repository.pruneBatchAsLeader('provider_calls', 90, 10)).leader).toBe(true);
  });

  it('holds no lock a pay-in waits for: the order, its events, their deliveries and the call log are written while a batch is open', async () => {
    const endpoint = randomUUID();
    await sql(
      `INSERT INTO webhook_endpoints (id, url, events, secret_encrypted) VALUES ($1::uuid, 'http://127.0.0.1:9/hook', '{}', 'x')`,
      endpoint,
    );
    for (let i = 0; i < 20; i++) {
      const event = `evt_old_${randomUUID().replace(/-/g, '')}`;
      await sql(
        `INSERT INTO provider_calls (id, area, method, endpoint, url, outcome, duration_ms, created_at)
         VALUES (gen_random_uuid(), 'payin', 'POST', '/api/agent/bills/v3', 'http://x', 'ok', 1, now() - interval '400 days')`,
      );
      // The trigger gives the old event its delivery to the endpoint, made final and old here with one
      // attempt, in one transaction: the instance's delivery job never sees it pending (it attempted one once).
      await service.prisma.$transaction([
        service.prisma.$executeRawUnsafe(
          `INSERT INTO events (id, type, resource_type, resource_id, snapshot, created_at)
           VALUES ($1, 'order.succeeded', 'order', gen_random_uuid(), '{}', now() - interval '400 days')`,
          event,
        ),
        service.prisma.$executeRawUnsafe(
          `UPDATE webhook_deliveries SET status = 'DELIVERED', attempt_count = 1, created_at = now() - interval '400 days' WHERE event_id = $1`,
          event,
        ),
        service.prisma.$executeRawUnsafe(
          `INSERT INTO webhook_attempts (delivery_id, at, http_status, duration_ms) SELECT id, now(), 204, 1 FROM webhook_deliveries WHERE event_id = $1`,
          event,
        ),
      ]);
    }

    // Another instance's batches, their deletions not committed: their row locks are held.
    expect((await other.query(statement('retention_prune_provider_calls'), [90, 1000])).rowCount).toBe(20);
    expect((await other.query(statement('retention_prune_events'), [30, 1000])).rows).toEqual([
      { events: 20, deliveries: 20, attempts: 20 },
    ]);

    const buyer = await customer(service);
    const payIn = (async () => {
      const order = await buyer.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK });
      await service.get(ProviderCallLog).flush();
      return order;
    })();
    const blocked = new Promise<'blocked'>((resolve) => setTimeout(() => resolve('blocked'), 5_000).unref());
    const order = await Promise.race([payIn, blocked]);
    expect(order === 'blocked' ? order : order.status).toBe(201);
    if (order === 'blocked') return;
    const [written] = await service.prisma.$queryRawUnsafe<{ events: bigint; deliveries: bigint; calls: bigint }[]>(
      `SELECT (SELECT count(*) FROM events WHERE resource_id = $1::uuid) AS events,
              (SELECT count(*) FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.resource_id = $1::uuid) AS deliveries,
              (SELECT count(*) FROM provider_calls WHERE created_at > now() - interval '1 minute') AS calls`,
      order.body.id,
    );
    expect(written.events).toBeGreaterThan(0n);
    expect(written.deliveries).toBe(written.events);
    expect(written.calls).toBeGreaterThan(0n);
    await other.query('COMMIT');
  });
});
