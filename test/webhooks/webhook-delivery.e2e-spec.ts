import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { SecretBox } from '../../src/common/secret-box';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { webhookSecretPurpose } from '../../src/webhooks/webhook-endpoints.types';
import { WEBHOOK_MAX_IN_FLIGHT, WEBHOOK_POLL_INTERVAL_MS, WebhookDeliveryJob } from '../../src/webhooks/webhook-delivery.job';
import { newWebhookSecret } from '../../src/webhooks/webhook-signature';
import { customer, waitForOrder } from '../support/orders-client';
import { freePort, startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { until } from '../support/until';
import { WebhookReceiver } from './webhook-receiver';

// Three attempts: at once, then 1 s and 1 s later (plus up to 10 % jitter).
/**
 * Attempts time out after 2 s: long enough that an answer the receiver sends at once, or after two
 * poll intervals, is never late, even while the embedded database (in this process) holds the event
 * loop; a timed-out attempt would be retried and reach the receiver twice.
 */
const WEBHOOK_TIMEOUT_MS = 2_000;
const ENV = { WEBHOOK_RETRY_SCHEDULE: '0,1,1', WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS) };

interface AttemptRow {
  http_status: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
  at: Date;
}

/**
 * The delivery worker against a local receiver, on the test database (PGlite or PostgreSQL): each
 * test registers its own endpoint (every other one disabled), makes events, and reads what the
 * receiver got and what webhook_deliveries and webhook_attempts hold.
 */
describe('webhook delivery', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    receiver = await new WebhookReceiver().start();
    service = await startTestService(sandbox, ENV, [], { listen: true });
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await sandbox?.close();
  });

  const sql = <T = Record<string, unknown>>(text: string, ...values: unknown[]) => service.prisma.$queryRawUnsafe<T[]>(text, ...values);

  /** The only enabled endpoint from now on; its secrets sealed as the endpoints area seals them. */
  async function onlyEndpoint(url: string, options: { previousSecret?: string } = {}) {
    await sql(`UPDATE webhook_endpoints SET status = 'DISABLED' WHERE status = 'ENABLED'`);
    const id = randomUUID();
    const secret = newWebhookSecret();
    const box = new SecretBox(service.config.dataEncryptionKey);
    await sql(
      `INSERT INTO webhook_endpoints (id, url, events, secret_encrypted, previous_secret_encrypted, previous_secret_until)
       VALUES ($1::uuid, $2, '{}', $3, $4, CASE WHEN $4::text IS NULL THEN NULL ELSE now() + interval '1 hour' END)`,
      id,
      url,
      box.encrypt(secret, webhookSecretPurpose(id)),
      options.previousSecret ? box.encrypt(options.previousSecret, webhookSecretPurpose(id)) : null,
    );
    return { id, secret };
  }

  /** A PROCESSING order written straight to the database: its trigger writes order.processing, fanned out. */
  async function processingOrder(): Promise<string> {
    const id = randomUUID();
    await sql(
      `INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email, updated_at)
       VALUES ($1::uuid, $2, 'cust_webhooks', 'PROCESSING', 1500, 'XAF', 1, '237600000006', 'webhooks', 'Awa', 'awa@example.com', now())`,
      id,
      `ord_${id.replace(/-/g, '')}`,
    );
    const [event] = await sql<{ id: string }>(`SELECT id FROM events WHERE resource_id = $1::uuid`, id);
    return event.id;
  }

  async function deliveryOf(eventId: string, endpointId: string) {
    const [row] = await sql<{ id: string; status: string; attempt_count: number; claimed_by: string | null }>(
      `SELECT id, status::text, attempt_count, claimed_by FROM webhook_deliveries WHERE event_id = $1 AND endpoint_id = $2::uuid`,
      eventId,
      endpointId,
    );
    return row;
  }

  async function attemptsOf(deliveryId: string) {
    return sql<AttemptRow>(
      `SELECT http_status, duration_ms, error, response_body, at FROM webhook_attempts WHERE delivery_id = $1::uuid ORDER BY id`,
      deliveryId,
    );
  }

  const finished = (eventId: string, endpointId: string) =>
    until(
      `the delivery of ${eventId} is finished`,
      async () => {
        const delivery = await deliveryOf(eventId, endpointId);
        return delivery && delivery.status !== 'PENDING' && delivery;
      },
      15_000,
      50,
    );

  it("a pay-in's events arrive signed, within 2 s of their commit, each once", async () => {
    const path = `/ok-${randomUUID()}`;
    const endpoint = await onlyEndpoint(receiver.on(path, (_, res) => res.writeHead(204).end()));
    const alice = await customer(service);
    const created = await alice.createOrder();
    expect(created.status).toBe(201);
    await waitForOrder(service, alice.token, created.body.id, (o) => o.status === 'SUCCEEDED');

    const events = await sql<{ id: string; type: string; created_at: Date }>(
      `SELECT id, type, created_at FROM events WHERE resource_id = $1::uuid ORDER BY created_at`,
      created.body.id,
    );
    expect(events.map((e) => e.type)).toEqual(['order.processing', 'order.succeeded']);
    await until('both events arrived', async () => receiver.hitsOn(path).length >= 2, 15_000, 50);
    const verifier = new Webhook(endpoint.secret);
    for (const event of events) {
      const hits = receiver.hitsOn(path).filter((h) => h.headers['webhook-id'] === event.id);
      expect(hits).toHaveLength(1);
      const [hit] = hits;
      expect(hit.headers['content-type']).toBe('application/json');
      const verified = verifier.verify(hit.body, hit.headers as Record<string, string>) as {
        id: string;
        type: string;
        data: { id: string };
      };
      expect(verified).toMatchObject({ id: event.id, type: event.type, data: { id: created.body.id } });
      expect(Math.abs(Number(hit.headers['webhook-timestamp']) - hit.at / 1000)).toBeLessThan(2);
      expect(hit.at - event.created_at.getTime()).toBeLessThan(2_000);
      const delivery = await finished(event.id, endpoint.id);
      expect(delivery).toMatchObject({ status: 'DELIVERED', attempt_count: 1, claimed_by: null });
      const [attempt] = await attemptsOf(delivery.id);
      expect(attempt).toMatchObject({ http_status: 204, error: null, response_body: '' });
    }
  });

  it('retries a 500 on the schedule, then FAILED; every attempt stored with the first 1 KiB of the answer', async () => {
    const path = `/fail-${randomUUID()}`;
    const endpoint = await onlyEndpoint(
      receiver.on(path, (_, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('é'.repeat(1500))),
    );
    const eventId = await processingOrder();
    const delivery = await finished(eventId, endpoint.id);
    expect(delivery).toMatchObject({ status: 'FAILED', attempt_count: 3, claimed_by: null });
    const attempts = await attemptsOf(delivery.id);
    expect(attempts).toHaveLength(3);
    for (const attempt of attempts) {
      expect(attempt).toMatchObject({ http_status: 500, error: 'HTTP 500' });
      expect(Buffer.byteLength(attempt.response_body!)).toBe(1024);
      expect(attempt.response_body).toBe('é'.repeat(512));
      expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
    }
    const hits = receiver.hitsOn(path);
    expect(hits.map((h) => h.headers['webhook-id'])).toEqual([eventId, eventId, eventId]);
    // 1 s apart (plus up to 10 %, plus the poll interval).
    for (const i of [1, 2]) {
      expect(hits[i].at - hits[i - 1].at).toBeGreaterThanOrEqual(950);
      expect(hits[i].at - hits[i - 1].at).toBeLessThan(2_000);
    }
    // The timestamp is the attempt's; the id stays.
    expect(new Set(hits.map((h) => h.headers['webhook-signature'])).size).toBeGreaterThan(1);
    // Still listed, no further attempt.
    await sleep(1_500);
    expect(receiver.hitsOn(path)).toHaveLength(3);
  });

  it('a timeout, a refused connection and a redirect are failed attempts; the redirect is not followed', async () => {
    const slow = `/slow-${randomUUID()}`;
    const target = `/target-${randomUUID()}`;
    const redirect = `/redirect-${randomUUID()}`;
    receiver.on(slow, () => undefined); // never answers
    receiver.on(redirect, (_, res) => res.writeHead(302, { location: `${receiver.base}${target}` }).end());
    const closedPort = await freePort();

    const cases = [
      { url: `${receiver.base}${slow}`, status: null, error: new RegExp(`^timeout: no complete answer within ${WEBHOOK_TIMEOUT_MS} ms`) },
      { url: `http://127.0.0.1:${closedPort}/hook`, status: null, error: /^ECONNREFUSED/ },
      { url: `${receiver.base}${redirect}`, status: 302, error: /^redirect \(302\) not followed$/ },
    ];
    for (const expected of cases) {
      const endpoint = await onlyEndpoint(expected.url);
      const eventId = await processingOrder();
      const delivery = await finished(eventId, endpoint.id);
      expect(delivery).toMatchObject({ status: 'FAILED', attempt_count: 3 });
      const attempts = await attemptsOf(delivery.id);
      expect(attempts).toHaveLength(3);
      for (const attempt of attempts) {
        expect(attempt.http_status).toBe(expected.status);
        expect(attempt.error).toMatch(expected.error);
      }
      if (expected.status === null && expected.error.source.includes('timeout')) {
        for (const attempt of attempts) expect(attempt.duration_ms).toBeGreaterThanOrEqual(WEBHOOK_TIMEOUT_MS - 50);
      }
    }
    expect(receiver.hitsOn(slow)).toHaveLength(3);
    expect(receiver.hitsOn(redirect)).toHaveLength(3);
    expect(receiver.hitsOn(target)).toHaveLength(0);
  }, 60_000);

  it('honours a Retry-After on 429 and 503 longer than the schedule', async () => {
    const path = `/busy-${randomUUID()}`;
    const endpoint = await onlyEndpoint(
      receiver.on(path, (n, res) => {
        if (n === 0) res.writeHead(429, { 'retry-after': '3' }).end('slow down');
        else if (n === 1) res.writeHead(503, { 'retry-after': new Date(Date.now() + 3_000).toUTCString() }).end();
        else res.writeHead(200).end();
      }),
    );
    const eventId = await processingOrder();
    const delivery = await until(
      'delivered',
      async () => {
        const d = await deliveryOf(eventId, endpoint.id);
        return d?.status === 'DELIVERED' && d;
      },
      20_000,
      50,
    );
    expect(delivery.attempt_count).toBe(3);
    const hits = receiver.hitsOn(path);
    expect(hits).toHaveLength(3);
    // The schedule says 1 s; the answers asked for 3 s (an HTTP date has a 1 s resolution).
    expect(hits[1].at - hits[0].at).toBeGreaterThanOrEqual(2_950);
    expect(hits[2].at - hits[1].at).toBeGreaterThanOrEqual(1_950);
    expect((await attemptsOf(delivery.id)).map((a) => a.http_status)).toEqual([429, 503, 200]);
  }, 30_000);

  it('410 Gone disables the endpoint, which then receives nothing', async () => {
    const path = `/gone-${randomUUID()}`;
    const endpoint = await onlyEndpoint(receiver.on(path, (_, res) => res.writeHead(410).end('gone')));
    const eventId = await processingOrder();
    const delivery = await finished(eventId, endpoint.id);
    expect(delivery).toMatchObject({ status: 'FAILED', attempt_count: 1 });
    const [row] = await sql<{ status: string; disabled_reason: string }>(
      `SELECT status::text, disabled_reason FROM webhook_endpoints WHERE id = $1::uuid`,
      endpoint.id,
    );
    expect(row.status).toBe('DISABLED');
    expect(row.disabled_reason).toMatch(/^410 Gone answered at /);
    const later = await processingOrder();
    await sleep(1_000);
    expect(await deliveryOf(later, endpoint.id)).toBeUndefined();
    expect(receiver.hitsOn(path)).toHaveLength(1);
  });

  it('during a rotation, the signature verifies with the new secret and with the previous one', async () => {
    const path = `/rotation-${randomUUID()}`;
    const previous = newWebhookSecret();
    const endpoint = await onlyEndpoint(
      receiver.on(path, (_, res) => res.writeHead(200).end()),
      { previousSecret: previous },
    );
    const eventId = await processingOrder();
    await finished(eventId, endpoint.id);
    const [hit] = receiver.hitsOn(path);
    expect(String(hit.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [endpoint.secret, previous]) {
      expect(new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>)).toMatchObject({ id: eventId });
    }
    expect(() => new Webhook(newWebhookSecret()).verify(hit.body, hit.headers as Record<string, string>)).toThrow();
  });

  it('a claim that lapses (its instance died) is attempted again once it has lapsed, not before', async () => {
    const path = `/lapsed-${randomUUID()}`;
    const endpoint = await onlyEndpoint(receiver.on(path, (_, res) => res.writeHead(200).end()));
    // An event whose delivery a dead instance claimed for 2 more seconds, written in one transaction.
    const eventId = await service.prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`UPDATE webhook_endpoints SET status = 'DISABLED' WHERE id = $1::uuid`, endpoint.id);
      const orderId = randomUUID();
      await tx.$executeRawUnsafe(
        `INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email, updated_at)
         VALUES ($1::uuid, $2, 'cust_webhooks', 'PROCESSING', 1500, 'XAF', 1, '237600000006', 'webhooks', 'Awa', 'awa@example.com', now())`,
        orderId,
        `ord_${orderId.replace(/-/g, '')}`,
      );
      const [event] = await tx.$queryRawUnsafe<{ id: string }[]>(`SELECT id FROM events WHERE resource_id = $1::uuid`, orderId);
      await tx.$executeRawUnsafe(
        `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, claimed_until, claimed_by)
         VALUES (gen_random_uuid(), $1, $2::uuid, clock_timestamp() + interval '2 seconds', 'dead-instance:1')`,
        event.id,
        endpoint.id,
      );
      await tx.$executeRawUnsafe(`UPDATE webhook_endpoints SET status = 'ENABLED' WHERE id = $1::uuid`, endpoint.id);
      return event.id;
    });
    const committed = Date.now();
    const delivery = await finished(eventId, endpoint.id);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attempt_count: 1 });
    const [hit] = receiver.hitsOn(path);
    expect(hit.headers['webhook-id']).toBe(eventId);
    expect(hit.at - committed).toBeGreaterThanOrEqual(1_500);
  });

  it('two instances on one database never attempt the same delivery at the same moment', async () => {
    const path = `/pair-${randomUUID()}`;
    // Each answer takes two poll intervals (within WEBHOOK_TIMEOUT_MS): whichever instance claims first fills its
    // allowance for the endpoint (WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT) and the other claims more while they run.
    const endpoint = await onlyEndpoint(
      receiver.on(path, (_, res) => void setTimeout(() => res.writeHead(200).end(), 2 * WEBHOOK_POLL_INTERVAL_MS)),
    );
    const second = await startTestService(sandbox, ENV);
    try {
      const jobs = [service.get(WebhookDeliveryJob), second.get(WebhookDeliveryJob)];
      const startedBefore = jobs.map((job) => job.attemptsStarted);
      // The events first, with the endpoint disabled (nothing is fanned out to it)…
      await sql(`UPDATE webhook_endpoints SET status = 'DISABLED' WHERE id = $1::uuid`, endpoint.id);
      const eventIds: string[] = [];
      for (let i = 0; i < WEBHOOK_MAX_IN_FLIGHT + 28; i++) eventIds.push(await processingOrder());
      // …then all their deliveries due at once, in one commit.
      await service.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(
          `INSERT INTO webhook_deliveries (id, event_id, endpoint_id) SELECT gen_random_uuid(), id, $2::uuid FROM events WHERE id = ANY($1::text[])`,
          eventIds,
          endpoint.id,
        );
        await tx.$executeRawUnsafe(`UPDATE webhook_endpoints SET status = 'ENABLED' WHERE id = $1::uuid`, endpoint.id);
      });
      // Both instances claim concurrently as well as on their timers.
      await Promise.all(jobs.flatMap((job) => [job.runNow(), job.runNow()]));
      await until(
        'every event delivered',
        async () => {
          const [{ n }] = await sql<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1::uuid AND status = 'DELIVERED'`,
            endpoint.id,
          );
          return n === eventIds.length;
        },
        30_000,
        50,
      );
      const hits = receiver.hitsOn(path);
      const perEvent = new Map<string, number>();
      for (const hit of hits) perEvent.set(String(hit.headers['webhook-id']), (perEvent.get(String(hit.headers['webhook-id'])) ?? 0) + 1);
      expect([...perEvent.keys()].sort()).toEqual([...eventIds].sort());
      expect([...perEvent.values()].every((n) => n === 1)).toBe(true);
      expect(receiver.maxConcurrentPerId).toBe(1);
      // Both instances took part.
      expect(jobs.map((job, i) => job.attemptsStarted > startedBefore[i])).toEqual([true, true]);
    } finally {
      await second.close();
    }
  }, 60_000);
});
