import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Client } from 'pg';
import request from 'supertest';
import { ReplicaReads } from '../../src/database/replica-reads.service';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, userWithCard } from '../support/cards-factories';
import { customer } from '../support/orders-client';
import { EFFECTIVE_DATABASE_URL_ENV } from '../support/test-database';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { REPLICA_ROUTES } from './finance-read-routes';
import { replicaTestsUnavailable, startStreamingPair, type StreamingPair } from './streaming-standby';

const MAX_LAG_SECONDS = 3;
/** The read-only role the service reads the standby as (created on the primary, streamed to the standby). */
const FINANCE_READER = 'bff_finance_reader';

// Run only when asked for (its own jest project): without PostgreSQL 15's server programs it fails and says why, never skips.
const unavailable = replicaTestsUnavailable();
if (unavailable) {
  describe('finance reads on a streaming replica', () => {
    it('has PostgreSQL 15 server programs', () => {
      throw new Error(`the replica suite cannot run: ${unavailable}`);
    });
  });
} else {
  describe('finance reads on a streaming replica', replicaSuite);
}

/**
 * A private primary and its streaming standby (pg_basebackup -R), the service in-process on the
 * primary with DATABASE_REPLICA_URL on the standby. Who served a read is seen twice: by the
 * statements each pool sent for that request, and by the standby's own table statistics.
 */
function replicaSuite() {
  let pair: StreamingPair;
  let sandbox: RunningSandbox;
  let service: TestService;
  let primary: Client;
  let financeToken: string;
  let buyer: Awaited<ReturnType<typeof customer>>;
  const ids: Record<string, string> = {};
  const began = Date.now();

  beforeAll(async () => {
    pair = await startStreamingPair();
    await promisify(execFile)(process.execPath, ['-r', '@swc-node/register', resolve(__dirname, '../../src/database/migrate.cli.ts')], {
      env: { ...process.env, DATABASE_URL: pair.primaryUrl, NODE_ENV: 'test' },
      cwd: resolve(__dirname, '../..'),
    });
    primary = new Client({ connectionString: pair.primaryUrl });
    await primary.connect();
    await primary.query(`CREATE ROLE ${FINANCE_READER} LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${FINANCE_READER}`);
    sandbox = await startTestSandbox();
    // This suite's service runs on its own primary, not on a database of the integration run.
    process.env[EFFECTIVE_DATABASE_URL_ENV] = pair.primaryUrl;
    service = await startTestService(
      sandbox,
      {
        DATABASE_URL: pair.primaryUrl,
        DATABASE_REPLICA_URL: pair.standbyUrl(FINANCE_READER),
        DATABASE_REPLICA_MAX_LAG_SECONDS: String(MAX_LAG_SECONDS),
        LOG_LEVEL: 'warn',
      },
      [],
      { listen: true },
    );
    financeToken = await service.bearer('fin_replica', 'finance');
    buyer = await customer(service);
    const created = await buyer.createOrder();
    expect(created.status).toBe(201);
    ids.order = created.body.id;
    const cards = await cardsClient(service);
    const { cardUser, card } = await userWithCard(cards);
    ids.cardUser = cardUser.id;
    ids.card = card.id;
    await replicaState('ok');
  }, 120_000);

  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
    await primary?.end();
    await pair?.stop();
    console.log(`replica suite: ${((Date.now() - began) / 1000).toFixed(1)} s`);
  });

  const pathOf = (route: string) =>
    route.replace('/v1/cards/{id}', `/v1/cards/${ids.card}`).replace('/v1/card-users/{id}', `/v1/card-users/${ids.cardUser}`);

  /** GET `path` as `token`, with the statements each pool sent for this request (by its request id). */
  async function served(path: string, token = financeToken) {
    const seen: { pool: 'primary' | 'replica'; requestId: string | undefined; sql: string }[] = [];
    const stops = [
      service.prisma.observeStatements((sql, requestId) => seen.push({ pool: 'primary', requestId, sql })),
      service.get(ReplicaReads).observeStatements((sql, requestId) => seen.push({ pool: 'replica', requestId, sql })),
    ];
    try {
      const res = await request(service.server).get(path).auth(token, { type: 'bearer' });
      const id = res.headers['x-request-id'];
      const of = (pool: string) => seen.filter((s) => s.pool === pool && s.requestId === id).map((s) => s.sql);
      return { res, primary: of('primary'), replica: of('replica') };
    } finally {
      for (const stop of stops) stop();
    }
  }

  async function readiness() {
    const res = await request(service.server).get('/health/ready');
    return { status: res.status, replica: res.body.checks?.replica as { state: string; lagSeconds: number | null } };
  }

  async function replicaState(state: string, timeoutMs = 20_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ready = await readiness();
      if (ready.replica?.state === state) return ready;
      if (Date.now() > deadline) throw new Error(`the replica never became ${state}: ${JSON.stringify(ready)}`);
      await sleep(100);
    }
  }

  /** Scans of each table on the standby, by its own statistics (PostgreSQL counts a standby's reads). */
  async function standbyScans(): Promise<Map<string, number>> {
    const standby = new Client({ connectionString: pair.standbyUrl() });
    await standby.connect();
    try {
      const { rows } = await standby.query<{ relname: string; scans: string }>(
        `SELECT relname, (coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::text AS scans FROM pg_stat_user_tables`,
      );
      return new Map(rows.map((r) => [r.relname, Number(r.scans)]));
    } finally {
      await standby.end();
    }
  }

  async function standbyQuery(sql: string): Promise<void> {
    const standby = new Client({ connectionString: pair.standbyUrl() });
    await standby.connect();
    try {
      await standby.query(sql);
    } finally {
      await standby.end();
    }
  }

  it("(a) serves every finance list from the standby while it is healthy, as the standby's own statistics show", async () => {
    const before = await standbyScans();
    for (const { route } of REPLICA_ROUTES) {
      const { res, primary: onPrimary, replica } = await served(pathOf(route));
      expect([route, res.status]).toEqual([route, 200]);
      expect([route, replica.length > 0]).toEqual([route, true]);
      // The primary may have looked up the card or card user the list is of, or written the export's audit event: never a list.
      expect([route, onPrimary.filter((sql) => replica.includes(sql))]).toEqual([route, []]);
    }
    const read = new Set(REPLICA_ROUTES.flatMap((r) => r.tables));
    // Statistics reach the standby's counters within about a second of each transaction.
    const deadline = Date.now() + 15_000;
    let grown: string[] = [];
    while (Date.now() < deadline) {
      const after = await standbyScans();
      grown = [...read].filter((table) => (after.get(table) ?? 0) > (before.get(table) ?? 0));
      if (grown.length === read.size) break;
      await sleep(250);
    }
    expect(grown.sort()).toEqual([...read].sort());
  });

  it("keeps a customer's own reads on the primary", async () => {
    for (const path of ['/v1/orders', `/v1/orders/${ids.order}`]) {
      const { res, primary: onPrimary, replica } = await served(path, buyer.token);
      expect([path, res.status, replica]).toEqual([path, 200, []]);
      expect(onPrimary.length).toBeGreaterThan(0);
    }
  });

  it('sends a read that fails on the standby to the primary, for that request', async () => {
    // The standby refuses the finance reader the audit trail (the REVOKE streams there): the read fails there only.
    await primary.query(`REVOKE SELECT ON audit_events FROM ${FINANCE_READER}`);
    try {
      await waitUntilStandbyHas(
        `SELECT 1 FROM pg_class WHERE relname = 'audit_events' AND NOT has_table_privilege('${FINANCE_READER}', oid, 'SELECT')`,
      );
      const { res, primary: onPrimary, replica } = await served('/v1/audit-events');
      expect(res.status).toBe(200);
      expect(replica.length).toBeGreaterThan(0);
      expect(onPrimary).toEqual(replica);
      expect((await readiness()).replica.state).toBe('ok');
    } finally {
      await primary.query(`GRANT SELECT ON audit_events TO ${FINANCE_READER}`);
    }
  });

  it('(b) with its replay paused past the bound, shows a new order at once, read on the primary; (d) back on the standby once resumed', async () => {
    await standbyQuery('SELECT pg_wal_replay_pause()');
    try {
      // A write the paused standby does not replay: from then on it falls behind.
      expect((await buyer.createOrder()).status).toBe(201);
      const lagging = await replicaState('lagging', (MAX_LAG_SECONDS + 10) * 1000);
      expect(lagging.status).toBe(200);
      expect(lagging.replica.lagSeconds).toBeGreaterThan(MAX_LAG_SECONDS);
      const fresh = await buyer.createOrder();
      expect(fresh.status).toBe(201);
      const { res, primary: onPrimary, replica } = await served('/v1/orders');
      expect(res.body.items[0].id).toBe(fresh.body.id);
      expect(replica).toEqual([]);
      expect(onPrimary.length).toBeGreaterThan(0);
    } finally {
      await standbyQuery('SELECT pg_wal_replay_resume()');
    }
    await replicaState('ok');
    const { res, primary: onPrimary, replica } = await served('/v1/orders');
    expect(res.status).toBe(200);
    expect(replica.length).toBeGreaterThan(0);
    expect(onPrimary).toEqual([]);
  });

  it('(c) with the standby stopped, finance lists still work and /health/ready stays 200 showing unreachable; (d) back on it once restarted', async () => {
    await pair.stopStandby();
    try {
      const newest = await buyer.createOrder();
      // At once, whether the background check has noticed yet or the read fails on the standby and is sent to the primary.
      const first = await served('/v1/orders');
      expect([first.res.status, first.res.body.items[0].id]).toEqual([200, newest.body.id]);
      const down = await replicaState('unreachable');
      expect(down).toEqual({ status: 200, replica: { state: 'unreachable', lagSeconds: null } });
      for (const { route } of REPLICA_ROUTES) {
        const { res, replica } = await served(pathOf(route));
        expect([route, res.status, replica]).toEqual([route, 200, []]);
      }
      const metrics = await request(service.server).get('/metrics');
      expect(metrics.text).toContain('database_replica_state{state="unreachable"} 1');
      expect(metrics.text).not.toMatch(/^database_replica_lag_seconds\{/m);
    } finally {
      await pair.startStandby();
    }
    const back = await replicaState('ok');
    expect(back.replica.lagSeconds).toBeLessThanOrEqual(MAX_LAG_SECONDS);
    expect((await request(service.server).get('/metrics')).text).toMatch(/^database_replica_lag_seconds\{state="(ok|lagging)"\} [\d.]+$/m);
    const { res, replica } = await served('/v1/reports/summary');
    expect(res.status).toBe(200);
    expect(replica.length).toBeGreaterThan(0);
  });

  async function waitUntilStandbyHas(sql: string, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const standby = new Client({ connectionString: pair.standbyUrl() });
      await standby.connect();
      const { rowCount } = await standby.query(sql).finally(() => standby.end());
      if (rowCount) return;
      if (Date.now() > deadline) throw new Error(`the standby never replayed: ${sql}`);
      await sleep(100);
    }
  }
}
