import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { SecretBox } from '../../src/common/secret-box';
import { ProviderCallLog } from '../../src/provider/provider-call-log';
import { FINANCIAL_TABLES, OPERATIONAL_TABLES } from '../../src/retention/retention-tables';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { webhookSecretPurpose } from '../../src/webhooks/webhook-endpoints.types';
import { newWebhookSecret } from '../../src/webhooks/webhook-signature';
import { userWithCard, cardsClient } from '../support/cards-factories';
import { databaseOfItsOwn } from '../support/database-of-its-own';
import { customer, waitForOrder } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { apiUser, uniqueLinkEmail } from '../wallet-links/link-hosts';
import { WebhookReceiver } from '../webhooks/webhook-receiver';

const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);

/**
 * `npm run data:prune` on a database of its own holding a year of every kind of row: the expired
 * call log and the expired events whose deliveries are final go, with their deliveries and attempts;
 * everything else, every financial record whatever its age, stays.
 */
describe('npm run data:prune', () => {
  let sandbox: RunningSandbox;
  let receiver: WebhookReceiver;
  let database: { url: string; drop: () => Promise<void> };
  let service: TestService;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    receiver = await new WebhookReceiver().start();
    database = await databaseOfItsOwn('data_prune');
    service = await startTestService(sandbox, { DATABASE_URL: database.url, WEBHOOK_RETRY_SCHEDULE: '0,3600' }, [], { listen: true });
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await sandbox?.close();
    await database?.drop();
  });

  const sql = <T = Record<string, unknown>>(text: string, ...values: unknown[]) => service.prisma.$queryRawUnsafe<T[]>(text, ...values);
  const count = async (text: string, ...values: unknown[]) =>
    Number((await sql<{ n: bigint }>(`SELECT count(*) AS n FROM ${text}`, ...values))[0].n);

  async function endpoint(url: string): Promise<string> {
    const id = randomUUID();
    await sql(
      `INSERT INTO webhook_endpoints (id, url, events, secret_encrypted) VALUES ($1::uuid, $2, '{}', $3)`,
      id,
      url,
      new SecretBox(service.config.dataEncryptionKey).encrypt(newWebhookSecret(), webhookSecretPurpose(id)),
    );
    return id;
  }

  /** Orders paid, a card user with a card topped up, a wallet link and a distribution to it: rows in every table. */
  async function activity(): Promise<void> {
    const payer = await customer(service);
    for (let i = 0; i < 2; i++) {
      const order = await payer.createOrder({ wallet: `2376${String(Date.now()).slice(-8)}` });
      expect(order.status).toBe(201);
      await waitForOrder(service, payer.token, order.body.id, (o) => o.status === 'SUCCEEDED');
    }
    const holder = await cardsClient(service);
    const { card } = await userWithCard(holder);
    expect((await holder.topUp(card.id, '1000')).status).toBe(200);
    const owner = await apiUser(service);
    const link = await owner.createLink({ email: uniqueLinkEmail('prune'), phone: '650100009', phoneCountry: '+237' });
    expect(link.status).toBe(201);
    const admin = await apiUser(service, `admin_${randomUUID().slice(0, 6)}`, 'admin');
    const distribution = await admin.createFiat({
      payer: 'Awa Ndiaye',
      currency: 'XAF',
      amount: '1000',
      distribution: [{ matricule: link.body.matricule, rate: 100 }],
    });
    expect(distribution.status).toBe(201);
    const erasure = await request(service.server)
      .post(`/v1/customers/cust_${randomUUID().slice(0, 8)}/erasure`)
      .auth(admin.token, { type: 'bearer' })
      .set('Idempotency-Key', randomUUID())
      .send({ note: 'retention test' });
    expect(erasure.status).toBe(202);
    // Done (and audited) before the counts are taken.
    for (let done = false; !done; await new Promise((r) => setTimeout(r, 50))) {
      const state = await request(service.server)
        .get(`/v1/customers/${erasure.body.subject}/erasure`)
        .auth(admin.token, { type: 'bearer' });
      done = state.body.status === 'DONE';
    }
    await service.get(ProviderCallLog).flush();
  }

  const settled = async () => {
    const deadline = Date.now() + 20_000;
    // Every delivery attempted once: DELIVERED at the healthy endpoint, PENDING (retry in an hour) at the failing one.
    while ((await count(`webhook_deliveries WHERE attempt_count = 0`)) > 0) {
      if (Date.now() > deadline) throw new Error('deliveries were never attempted');
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /** Every timestamptz column of every table moved `days` into the past (the audit trail's guard lifted for it). */
  async function backdateEverything(days: number) {
    const columns = await sql<{ table_name: string; column_name: string }>(
      `SELECT table_name::text, column_name::text FROM information_schema.columns
       WHERE table_schema = 'public' AND data_type = 'timestamp with time zone' AND table_name <> '_prisma_migrations'`,
    );
    const byTable = new Map<string, string[]>();
    for (const { table_name, column_name } of columns) byTable.set(table_name, [...(byTable.get(table_name) ?? []), column_name]);
    await sql(`ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_update_or_delete`);
    for (const [table, names] of byTable) {
      await sql(`UPDATE "${table}" SET ${names.map((c) => `"${c}" = "${c}" - make_interval(days => ${days})`).join(', ')}`);
    }
    await sql(`ALTER TABLE audit_events ENABLE TRIGGER audit_events_no_update_or_delete`);
  }

  const rowCounts = async (tables: readonly string[]) =>
    Object.fromEntries(await Promise.all(tables.map(async (table) => [table, await count(`"${table}"`)] as const)));

  const dataPrune = (env: Record<string, string> = {}) =>
    run(process.execPath, ['-r', '@swc-node/register', 'src/retention/data-prune.cli.ts'], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: database.url, ...env },
    });
  const printed = (stdout: string) =>
    Object.fromEntries([...stdout.matchAll(/^(\w+)\s+(\d+) deleted$/gm)].map((m) => [m[1], Number(m[2])]));

  it('deletes exactly the expired call log and the expired events whose deliveries are final, and never a financial record', async () => {
    await endpoint(receiver.on('/healthy', (_, res) => res.writeHead(204).end()));
    const failing = await endpoint(receiver.on('/failing', (_, res) => res.writeHead(500).end()));
    await activity();
    await settled();
    // The failing endpoint is disabled: its PENDING deliveries will never be attempted, so they hold nothing back.
    await sql(`UPDATE webhook_endpoints SET status = 'DISABLED' WHERE id = $1::uuid`, failing);
    await backdateEverything(400);

    // Old events kept: one still to be delivered to an enabled endpoint, one redelivered within the period.
    const [waiting, redelivered] = await sql<{ id: string }>(`SELECT id FROM events ORDER BY created_at, id LIMIT 2`);
    await sql(
      `UPDATE webhook_deliveries SET status = 'PENDING', next_attempt_at = now() + interval '1 day'
       WHERE event_id = $1 AND endpoint_id <> $2::uuid`,
      waiting.id,
      failing,
    );
    await sql(
      `UPDATE webhook_deliveries SET created_at = now() - interval '1 day' WHERE event_id = $1 AND endpoint_id = $2::uuid`,
      redelivered.id,
      failing,
    );
    // A call log row 89 days old stays (90 days kept).
    await sql(
      `UPDATE provider_calls SET created_at = now() - interval '89 days' WHERE id = (SELECT id FROM provider_calls ORDER BY id LIMIT 1)`,
    );

    // And a second year of activity on top, which is all new.
    await activity();
    await settled();

    const kept = [waiting.id, redelivered.id];
    const expected = {
      provider_calls: await count(`provider_calls WHERE created_at < now() - interval '90 days'`),
      events: await count(`events WHERE created_at < now() - interval '30 days' AND id <> ALL($1::text[])`, kept),
      webhook_deliveries: await count(
        `webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.created_at < now() - interval '30 days' AND e.id <> ALL($1::text[])`,
        kept,
      ),
      webhook_attempts: await count(
        `webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN events e ON e.id = d.event_id
         WHERE e.created_at < now() - interval '30 days' AND e.id <> ALL($1::text[])`,
        kept,
      ),
    };
    expect(Math.min(...Object.values(expected))).toBeGreaterThan(0);
    const operationalBefore = await rowCounts(OPERATIONAL_TABLES);
    // Other jobs of the running service purge their own tables (idempotency keys, budget buckets): compared are the financial ones.
    const financialBefore = await rowCounts(FINANCIAL_TABLES);
    expect(Object.entries(financialBefore).filter(([, rows]) => rows === 0)).toEqual([]);
    // The financial records are old too: nothing spares them but the job not knowing their tables.
    expect(await count(`orders WHERE created_at < now() - interval '300 days'`)).toBeGreaterThan(0);
    expect(await count(`audit_events WHERE at < now() - interval '300 days'`)).toBeGreaterThan(0);

    const { stdout } = await dataPrune();
    expect(printed(stdout)).toEqual(expected);

    const operationalAfter = await rowCounts(OPERATIONAL_TABLES);
    for (const table of OPERATIONAL_TABLES)
      expect([table, operationalAfter[table]]).toEqual([table, operationalBefore[table] - expected[table]]);
    expect(await rowCounts(FINANCIAL_TABLES)).toEqual(financialBefore);
    expect(await count(`provider_calls WHERE created_at < now() - interval '90 days'`)).toBe(0);
    expect(
      (await sql<{ id: string }>(`SELECT id FROM events WHERE created_at < now() - interval '30 days' ORDER BY id`)).map((e) => e.id),
    ).toEqual([...kept].sort());

    // A second pass finds nothing more.
    expect(printed((await dataPrune()).stdout)).toEqual({ provider_calls: 0, events: 0, webhook_deliveries: 0, webhook_attempts: 0 });
  });

  it('reads its days from RETENTION_PROVIDER_CALLS_DAYS and RETENTION_WEBHOOK_DAYS', async () => {
    await backdateEverything(200);
    const none = { provider_calls: 0, events: 0, webhook_deliveries: 0, webhook_attempts: 0 };
    expect(printed((await dataPrune({ RETENTION_PROVIDER_CALLS_DAYS: '1000', RETENTION_WEBHOOK_DAYS: '1000' })).stdout)).toEqual(none);
    const calls = await count('provider_calls');
    expect(calls).toBeGreaterThan(0);
    expect(printed((await dataPrune({ RETENTION_PROVIDER_CALLS_DAYS: '150', RETENTION_WEBHOOK_DAYS: '1000' })).stdout)).toEqual({
      ...none,
      provider_calls: calls,
    });
  });
});
