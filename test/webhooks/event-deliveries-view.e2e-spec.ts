import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { SecretBox } from '../../src/common/secret-box';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { webhookSecretPurpose } from '../../src/webhooks/webhook-endpoints.types';
import { newWebhookSecret } from '../../src/webhooks/webhook-signature';
import { freePort, startTestSandbox, startTestService, type TestService } from '../support/test-service';

const RECEIVER_KEY = `zzz-receiver-key-${randomUUID().slice(0, 8)}`;

/**
 * What GET /v1/events/{id} shows of an endpoint and of its attempts: finance sees the endpoint's
 * origin only (its path and query carry the receiver's own credentials), admins the whole URL; an
 * attempt's error never names an address the endpoint's host resolved to, neither as stored now nor
 * for a row stored before.
 */
describe('GET /v1/events/{id}: the endpoint by its origin for finance, no resolved address in errors', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let financeToken: string;
  let adminToken: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    // One attempt only: the refused connection is the whole story.
    service = await startTestService(sandbox, { WEBHOOK_RETRY_SCHEDULE: '0' });
    financeToken = await service.bearer('fin-deliveries-view', 'finance');
    adminToken = await service.bearer('admin-deliveries-view', 'admin');
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  const sql = <T = Record<string, unknown>>(text: string, ...values: unknown[]) => service.prisma.$queryRawUnsafe<T[]>(text, ...values);
  const getEvent = (id: string, token: string) => request(service.server).get(`/v1/events/${id}`).auth(token, { type: 'bearer' });

  /** The only enabled endpoint; an order written straight to the database, whose event is fanned out to it. */
  async function eventDeliveredTo(
    url: string,
    status: 'ENABLED' | 'DISABLED' = 'ENABLED',
  ): Promise<{ eventId: string; endpointId: string }> {
    await sql(`UPDATE webhook_endpoints SET status = 'DISABLED' WHERE status = 'ENABLED'`);
    const endpointId = randomUUID();
    await sql(
      `INSERT INTO webhook_endpoints (id, url, events, secret_encrypted, status) VALUES ($1::uuid, $2, '{}', $3, $4::"WebhookEndpointStatus")`,
      endpointId,
      url,
      new SecretBox(service.config.dataEncryptionKey).encrypt(newWebhookSecret(), webhookSecretPurpose(endpointId)),
      status,
    );
    const orderId = randomUUID();
    await sql(
      `INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email, updated_at)
       VALUES ($1::uuid, $2, 'cust_view', 'PROCESSING', 1500, 'XAF', 1, '237600000006', 'view', 'Awa', 'awa@example.com', now())`,
      orderId,
      `ord_${orderId.replace(/-/g, '')}`,
    );
    const [event] = await sql<{ id: string }>(`SELECT id FROM events WHERE resource_id = $1::uuid`, orderId);
    return { eventId: event.id, endpointId };
  }

  async function failedDelivery(eventId: string): Promise<{ id: string }> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const [row] = await sql<{ id: string; status: string }>(
        `SELECT id, status::text FROM webhook_deliveries WHERE event_id = $1`,
        eventId,
      );
      if (row?.status === 'FAILED') return row;
      if (Date.now() > deadline) throw new Error(`the delivery of ${eventId} did not fail in time`);
      await sleep(50);
    }
  }

  it('a refused connection to a name that resolves to the loopback: stored and shown without the address; finance sees the origin only', async () => {
    const port = await freePort();
    const url = `http://localhost:${port}/echo?apikey=${RECEIVER_KEY}`;
    const { eventId } = await eventDeliveredTo(url);
    const delivery = await failedDelivery(eventId);

    const [stored] = await sql<{ error: string }>(`SELECT error FROM webhook_attempts WHERE delivery_id = $1::uuid`, delivery.id);
    expect(stored.error).toBe('ECONNREFUSED: the connection was refused');

    const asFinance = await getEvent(eventId, financeToken);
    expect(asFinance.status).toBe(200);
    const [seen] = asFinance.body.deliveries;
    expect(seen.endpointOrigin).toBe(`http://localhost:${port}`);
    expect(seen).not.toHaveProperty('endpointUrl');
    expect(seen.attempts).toEqual([expect.objectContaining({ httpStatus: null, error: 'ECONNREFUSED: the connection was refused' })]);
    const text = JSON.stringify(asFinance.body);
    for (const secret of [RECEIVER_KEY, '/echo', 'apikey', '127.0.0.1', '::1'])
      expect([secret, text.includes(secret)]).toEqual([secret, false]);

    const asAdmin = await getEvent(eventId, adminToken);
    expect(asAdmin.body.deliveries[0]).toMatchObject({ endpointOrigin: `http://localhost:${port}`, endpointUrl: url });
  });

  it('an attempt stored before, whose error names resolved addresses, is shown without them', async () => {
    // A disabled endpoint (nothing is sent to it) and a failed delivery with attempts as the old sender wrote them.
    const { eventId, endpointId } = await eventDeliveredTo(`https://probe3-loop.test:4399/echo?apikey=${RECEIVER_KEY}`, 'DISABLED');
    const [delivery] = await sql<{ id: string }>(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, attempt_count, completed_at)
       VALUES (gen_random_uuid(), $1, $2::uuid, 'FAILED', 3, now()) RETURNING id::text`,
      eventId,
      endpointId,
    );
    for (const error of [
      'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:4399',
      'EHOSTUNREACH: connect EHOSTUNREACH fd00:ec2::254:443',
      'timeout: connect ETIMEDOUT 10.20.30.40:4399',
    ])
      await sql(`INSERT INTO webhook_attempts (delivery_id, at, duration_ms, error) VALUES ($1::uuid, now(), 3, $2)`, delivery.id, error);

    const res = await getEvent(eventId, financeToken);
    expect(res.body.deliveries[0].endpointOrigin).toBe('https://probe3-loop.test:4399');
    expect(res.body.deliveries[0].attempts.map((a: { error: string }) => a.error)).toEqual([
      'ECONNREFUSED: connect ECONNREFUSED <address>',
      'EHOSTUNREACH: connect EHOSTUNREACH <address>',
      'timeout: connect ETIMEDOUT <address>',
    ]);
    expect(JSON.stringify(res.body)).not.toContain(RECEIVER_KEY);
  });
});
