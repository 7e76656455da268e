import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { SecretBox } from '../../src/common/secret-box';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { webhookSecretPurpose } from '../../src/webhooks/webhook-endpoints.types';
import { newWebhookSecret } from '../../src/webhooks/webhook-signature';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { until } from '../support/until';
import { WebhookReceiver } from './webhook-receiver';

/**
 * After a data-key rotation with a webhook secret rotation in between, and the old data key
 * removed too early: the previous webhook secret (sealed with the removed key) can no longer be
 * opened. It never stops a delivery: the attempt is signed with the current secret and the
 * unreadable one is logged (its key id, never a value). A current secret that cannot be opened
 * sends nothing, unsigned or otherwise: the attempt fails unsent with a clear error, retried on the
 * schedule, logged and counted for the operator.
 */
describe('webhook secrets no configured key opens', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let receiver: WebhookReceiver;
  /** The data key that sealed the older secrets, removed from the configuration. */
  const removedKey = randomBytes(32);

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    receiver = await new WebhookReceiver().start();
    service = await startTestService(sandbox, { WEBHOOK_RETRY_SCHEDULE: '0,1,60', WEBHOOK_TIMEOUT_MS: '2000' });
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await sandbox?.close();
  });

  const sql = <T = Record<string, unknown>>(text: string, ...values: unknown[]) => service.prisma.$queryRawUnsafe<T[]>(text, ...values);

  /** The only enabled endpoint, its current and previous secrets sealed with the given data keys. */
  async function endpointSealedWith(url: string, currentKey: Buffer, previousKey: Buffer) {
    await sql(`UPDATE webhook_endpoints SET status = 'DISABLED' WHERE status = 'ENABLED'`);
    const id = randomUUID();
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    await sql(
      `INSERT INTO webhook_endpoints (id, url, events, secret_encrypted, previous_secret_encrypted, previous_secret_until)
       VALUES ($1::uuid, $2, '{}', $3, $4, now() + interval '20 hours')`,
      id,
      url,
      new SecretBox(currentKey).encrypt(current, webhookSecretPurpose(id)),
      new SecretBox(previousKey).encrypt(previous, webhookSecretPurpose(id)),
    );
    return { id, current, previous };
  }

  async function processingOrder(): Promise<string> {
    const id = randomUUID();
    await sql(
      `INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email, updated_at)
       VALUES ($1::uuid, $2, 'cust_secrets', 'PROCESSING', 1500, 'XAF', 1, '237600000006', 'secrets', 'Awa', 'awa@example.com', now())`,
      id,
      `ord_${id.replace(/-/g, '')}`,
    );
    const [event] = await sql<{ id: string }>(`SELECT id FROM events WHERE resource_id = $1::uuid`, id);
    return event.id;
  }

  const metric = async (secret: string) => {
    const text = (await request(service.server).get('/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`webhook_signing_secrets_unreadable_total{secret="${secret}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  it('a previous secret that cannot be opened: delivered, signed with the current secret; logged without any secret', async () => {
    const path = `/previous-unreadable-${randomUUID()}`;
    const endpoint = await endpointSealedWith(
      receiver.on(path, (_, res) => res.writeHead(204).end()),
      service.config.dataEncryptionKey,
      removedKey,
    );
    const before = await metric('previous');
    const eventId = await processingOrder();
    const [delivery] = await until('delivered', () =>
      sql<{ status: string; attempt_count: number }>(
        `SELECT status::text, attempt_count FROM webhook_deliveries WHERE event_id = $1 AND status = 'DELIVERED'`,
        eventId,
      ).then((rows) => rows.length > 0 && rows),
    );
    expect(delivery).toEqual({ status: 'DELIVERED', attempt_count: 1 });
    const [hit] = receiver.hitsOn(path);
    expect(String(hit.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(new Webhook(endpoint.current).verify(hit.body, hit.headers as Record<string, string>)).toMatchObject({ id: eventId });

    const warning = service.logs
      .entries()
      .find((e) => e.webhookEndpointId === endpoint.id && String(e.msg).startsWith('previous webhook secret cannot be opened'));
    expect(warning).toMatchObject({ level: 'warn', reason: expect.stringMatching(/^sealed with an unknown key \(key id [\w-]{8}\)$/) });
    for (const secret of [endpoint.current, endpoint.previous, removedKey.toString('base64')])
      expect(service.logs.text.includes(secret)).toBe(false);
    expect(await metric('previous')).toBeGreaterThan(before);
  });

  it('a current secret that cannot be opened: nothing is sent; the attempt fails unsent with a clear error and is retried', async () => {
    const path = `/current-unreadable-${randomUUID()}`;
    const endpoint = await endpointSealedWith(
      receiver.on(path, (_, res) => res.writeHead(204).end()),
      removedKey,
      service.config.dataEncryptionKey,
    );
    const before = await metric('current');
    const eventId = await processingOrder();
    const attempts = await until('two attempts recorded', async () => {
      const rows = await sql<{ error: string; http_status: number | null }>(
        `SELECT a.error, a.http_status FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
         WHERE d.event_id = $1 ORDER BY a.id`,
        eventId,
      );
      return rows.length >= 2 && rows;
    });
    for (const attempt of attempts) {
      expect(attempt.http_status).toBeNull();
      expect(attempt.error).toMatch(
        /^not sent: the endpoint's signing secret cannot be opened \(sealed with an unknown key \(key id [\w-]{8}\)\); restore its key or rotate the secret$/,
      );
    }
    const [delivery] = await sql<{ status: string }>(`SELECT status::text FROM webhook_deliveries WHERE event_id = $1`, eventId);
    expect(delivery.status).toBe('PENDING');
    expect(receiver.hitsOn(path)).toHaveLength(0);
    expect(service.logs.entries().some((e) => e.webhookEndpointId === endpoint.id && e.level === 'error')).toBe(true);
    for (const secret of [endpoint.current, endpoint.previous]) expect(service.logs.text.includes(secret)).toBe(false);
    expect(await metric('current')).toBeGreaterThanOrEqual(before + 2);
  });
});
