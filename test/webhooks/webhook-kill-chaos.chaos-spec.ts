import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { mintToken } from '../../src/auth/token-minter';
import { loadAppConfig } from '../../src/config/app-config';
import { SecretBox } from '../../src/common/secret-box';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { webhookSecretPurpose } from '../../src/webhooks/webhook-endpoints.types';
import { newWebhookSecret } from '../../src/webhooks/webhook-signature';
import { startChildService, type ChildService } from '../support/child-service';
import { orderRequest } from '../support/provider-factories';
import { testDatabaseUrl } from '../support/test-database';
import { startTestSandbox } from '../support/test-service';
import { WebhookReceiver } from './webhook-receiver';

const JWT_SECRET = 'webhook-chaos-jwt-secret-0123456789abcdefghijkl';
const ROUNDS = 6;
const ORDERS_PER_ROUND = 50;

/**
 * kill -9, again and again, while transitions happen: each round starts the real entry point
 * (`npm start`'s command) on the test database, sends pay-ins through the sandbox (each answered
 * PROCESSING, then SUCCEEDED or FAILED by the sandbox's callback), and SIGKILLs the service at a
 * random moment while attempts are in flight and claims are held. A last instance then runs until
 * every delivery is finished. Every event in `events` must have reached the receiver (by
 * `webhook-id`), and every delivery must be DELIVERED: a crash loses nothing. Duplicates (an attempt
 * answered but not recorded before the kill) are allowed: delivery is at least once.
 */
describe('webhook delivery through repeated kill -9', () => {
  let sandbox: RunningSandbox;
  let receiver: WebhookReceiver;
  let db: Client;
  let child: ChildService | undefined;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ callbackDelayMs: 300 });
    receiver = await new WebhookReceiver().start();
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });
  afterAll(async () => {
    if (child && child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await db?.end();
    await receiver?.close();
    await sandbox?.close();
  });

  const start = () =>
    startChildService({
      DATABASE_URL: testDatabaseUrl(),
      PROVIDER_BASE_URL: sandbox.url,
      PROVIDER_TIMEOUT_MS: '3000',
      // One customer makes all 300 pay-ins: its share of the provider budget must hold them.
      PROVIDER_CUSTOMER_HOURLY_LIMIT: '600',
      AUTH_JWT_SECRET: JWT_SECRET,
      CALLBACK_SIGNING_SECRET: 'test-callback-signing-secret-0123456789abcdef',
      // Retries never run out during the test; the receiver answers 200 anyway.
      WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1',
      LOG_LEVEL: 'warn',
    });

  it('every event reaches the receiver at least once, whatever the kills', async () => {
    const began = Date.now();
    // Slow-ish answers: a kill finds attempts in flight.
    const url = receiver.on('/chaos', (_, res) => void setTimeout(() => res.writeHead(200).end(), Math.floor(Math.random() * 40)));
    // The only enabled endpoint, sealed as the service seals it (the test configuration's key).
    await db.query(`UPDATE webhook_endpoints SET status = 'DISABLED' WHERE status = 'ENABLED'`);
    const endpointId = randomUUID();
    const box = new SecretBox(loadAppConfig({ NODE_ENV: 'test' }).dataEncryptionKey);
    await db.query(`INSERT INTO webhook_endpoints (id, url, events, secret_encrypted) VALUES ($1::uuid, $2, '{}', $3)`, [
      endpointId,
      url,
      box.encrypt(newWebhookSecret(), webhookSecretPurpose(endpointId)),
    ]);
    const token = await mintToken({ sub: 'cust_chaos', roles: ['customer'], ttl: '1h', secret: JWT_SECRET });
    const kills: number[] = [];

    for (let round = 0; round < ROUNDS; round++) {
      child = await start();
      const base = child.base;
      const load = (async () => {
        let next = 0;
        await Promise.all(
          Array.from({ length: 6 }, async () => {
            while (next < ORDERS_PER_ROUND) {
              next++;
              const wallet = Math.random() < 0.8 ? TEST_WALLETS.SUCCESS : TEST_WALLETS.FAILURE;
              await fetch(`${base}/v1/orders`, {
                method: 'POST',
                headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
                body: JSON.stringify(orderRequest({ wallet })),
              }).then(
                (res) => res.arrayBuffer(),
                () => undefined, // the kill
              );
            }
          }),
        );
      })();
      // The kill: somewhere while pay-ins, callbacks and deliveries are under way.
      await sleep(800 + Math.floor(Math.random() * 1_500));
      const exited = child.exited;
      child.child.kill('SIGKILL');
      await exited;
      kills.push(Date.now());
      await load;
    }

    // A last instance finishes what the dead ones claimed (their claims lapse after 30 s).
    child = await start();
    const endpointEvents = async () =>
      (
        await db.query<{ event_id: string; status: string }>(
          `SELECT d.event_id, d.status::text FROM webhook_deliveries d WHERE d.endpoint_id = $1::uuid`,
          [endpointId],
        )
      ).rows;
    const deadline = Date.now() + 90_000;
    let deliveries = await endpointEvents();
    while (deliveries.some((d) => d.status !== 'DELIVERED') && Date.now() < deadline) {
      await sleep(500);
      deliveries = await endpointEvents();
    }
    const settledAfterLastKill = Date.now() - kills.at(-1)!;

    const events = (
      await db.query<{ id: string }>(
        `SELECT e.id FROM events e WHERE e.created_at >= (SELECT created_at FROM webhook_endpoints WHERE id = $1::uuid)`,
        [endpointId],
      )
    ).rows.map((e) => e.id);
    const received = new Map<string, number>();
    for (const hit of receiver.hitsOn('/chaos'))
      received.set(String(hit.headers['webhook-id']), (received.get(String(hit.headers['webhook-id'])) ?? 0) + 1);

    const duplicates = [...received.values()].filter((n) => n > 1).length;
    console.log(
      `webhook chaos: ${ROUNDS} kills, ${events.length} events, ${receiver.hitsOn('/chaos').length} requests ` +
        `(${duplicates} events received more than once), all delivered ${(settledAfterLastKill / 1000).toFixed(1)} s after the last kill, ` +
        `${((Date.now() - began) / 1000).toFixed(1)} s in all`,
    );
    expect(events.length).toBeGreaterThanOrEqual(200);
    // Every event has its delivery to the endpoint, delivered, and reached the receiver.
    expect(deliveries.map((d) => d.event_id).sort()).toEqual([...events].sort());
    expect(deliveries.filter((d) => d.status !== 'DELIVERED')).toEqual([]);
    expect(events.filter((id) => !received.has(id))).toEqual([]);
    // Never the same delivery attempted twice at the same moment.
    expect(receiver.maxConcurrentPerId).toBe(1);
  }, 300_000);
});
