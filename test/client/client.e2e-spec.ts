/**
 * The client (client/src) against the service listening on the test database with the sandbox
 * provider: typed calls, generated Idempotency-Keys, problems as ProblemError, watchOrder to the
 * final status; and CORS as a page on another origin needs it.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import request from 'supertest';
import { createClient, ProblemError, type MerchantClient, type OrderStatusEvent } from '../../client/src';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

const PAGE_ORIGIN = 'https://shop.example.com';
const CLIENT_ROOT = resolve(__dirname, '../../client');

/** Runs a command with PATH and `env` only; rejects with its output when it fails. */
async function run(command: string, args: string[], env: Record<string, string> = {}) {
  return promisify(execFile)(command, args, { cwd: CLIENT_ROOT, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 80_000 });
}

describe('the client against a listening service', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let baseUrl: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ callbackDelayMs: 1_500 });
    service = await startTestService(sandbox, { CORS_ORIGINS: PAGE_ORIGIN }, [], { listen: true });
    baseUrl = `http://127.0.0.1:${service.config.port}`;
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  const clientOf = async (sub: string): Promise<MerchantClient> => {
    const token = await service.bearer(sub, 'customer');
    return createClient({ baseUrl, getToken: () => token });
  };
  const order = (wallet: string) => ({
    amount: '1500',
    currency: 'XAF',
    wallet,
    service: 1,
    description: 'Client order',
    payer: 'Zoé Ékotto',
    payerEmail: 'zoe@example.com',
  });

  it('createOrder sends a generated Idempotency-Key; the same key given again replays the order; watchOrder follows it to SUCCEEDED and ends', async () => {
    const sub = `client_${randomUUID().slice(0, 8)}`;
    const client = await clientOf(sub);
    const created = await client.createOrder(order(TEST_WALLETS.SUCCESS));
    expect(created).toMatchObject({ status: 'PROCESSING', amount: '1500', currency: 'XAF' });
    const sent = sandbox.state
      .requestsTo('/api/agent/bills/v3')
      .filter((r) => (r.body as { order_id?: string }).order_id === created.reference);
    expect(sent).toHaveLength(1);

    const events: OrderStatusEvent[] = [];
    for await (const event of client.watchOrder(created.id)) events.push(event);
    expect(events.map((event) => event.status)).toEqual(['PROCESSING', 'SUCCEEDED']);
    expect(events.at(-1)).toMatchObject({ orderId: created.id, fromStatus: 'PROCESSING', eventId: expect.stringMatching(/^\d+$/) });

    // Resuming after the last event of a finished order: nothing more, and the iterator ends.
    const after: OrderStatusEvent[] = [];
    for await (const event of client.watchOrder(created.id, { lastEventId: events.at(-1)!.eventId })) after.push(event);
    expect(after).toEqual([]);

    const key = randomUUID();
    const first = await client.createOrder(order(TEST_WALLETS.SUCCESS), { idempotencyKey: key });
    const replay = await client.createOrder(order(TEST_WALLETS.SUCCESS), { idempotencyKey: key });
    expect(replay.id).toBe(first.id);
    expect(first.id).not.toBe(created.id);

    await expect(client.getOrder(created.id)).resolves.toMatchObject({ id: created.id, status: 'SUCCEEDED' });
    await expect(client.listOrders({ query: { status: 'SUCCEEDED' } })).resolves.toMatchObject({
      items: [expect.objectContaining({ id: created.id })],
    });
  }, 40_000);

  it('a refusal is a ProblemError with its code, detail and field errors; nothing reaches the provider', async () => {
    const client = await clientOf(`client_${randomUUID().slice(0, 8)}`);
    const before = sandbox.state.requestsTo('/api/agent/bills/v3').length;
    const refused = await client.createOrder({ ...order(TEST_WALLETS.SUCCESS), amount: '-5' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ProblemError);
    expect(refused).toMatchObject({ status: 400, code: 'validation_failed', errors: [expect.objectContaining({ field: 'amount' })] });
    expect((refused as ProblemError).detail).toEqual(expect.any(String));
    expect((refused as ProblemError).requestId).toEqual(expect.any(String));
    expect(sandbox.state.requestsTo('/api/agent/bills/v3')).toHaveLength(before);

    const notFound = await client.getOrder(randomUUID()).catch((error: unknown) => error);
    expect(notFound).toMatchObject({ name: 'ProblemError', status: 404, code: 'not_found' });
    // Another customer's order, followed live: 404 too, at once, not an endless reconnection.
    const owner = await clientOf(`client_${randomUUID().slice(0, 8)}`);
    const theirs = await owner.createOrder(order(TEST_WALLETS.NO_CALLBACK));
    const watching = client.watchOrder(theirs.id);
    await expect(watching.next()).rejects.toMatchObject({ status: 404, code: 'not_found' });
  }, 30_000);

  it('its build (client/dist as `npm run build` makes it: ES modules, compiled with the browser types only) pays and follows an order in plain Node', async () => {
    // Built into a folder of client/ so that the package's own dependencies resolve as they would for an app.
    const outDir = mkdtempSync(join(CLIENT_ROOT, '.test-dist-'));
    try {
      await run(process.execPath, [
        require.resolve('typescript/bin/tsc'),
        '-p',
        join(CLIENT_ROOT, 'tsconfig.build.json'),
        '--outDir',
        outDir,
        '--sourceMap',
        'false',
      ]);
      const script = `
        import { createClient, ProblemError } from ${JSON.stringify(pathToFileURL(join(outDir, 'index.js')).href)};
        const api = createClient({ baseUrl: process.env.API, getToken: () => process.env.TOKEN });
        const order = await api.createOrder(JSON.parse(process.env.ORDER));
        const statuses = [];
        for await (const change of api.watchOrder(order.id)) statuses.push(change.status);
        const refused = await api.getOrder('${randomUUID()}').catch((error) => error instanceof ProblemError && error.code);
        console.log(JSON.stringify({ statuses, refused }));
      `;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
        API: baseUrl,
        TOKEN: await service.bearer(`built_${randomUUID().slice(0, 8)}`, 'customer'),
        ORDER: JSON.stringify(order(TEST_WALLETS.SUCCESS)),
      });
      expect(JSON.parse(stdout)).toEqual({ statuses: ['PROCESSING', 'SUCCEEDED'], refused: 'not_found' });
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('CORS: a page on an allowed origin may send Last-Event-ID and read the headers a frontend needs', async () => {
    const preflight = await request(service.server)
      .options('/v1/orders/00000000-0000-4000-8000-000000000000/events')
      .set('origin', PAGE_ORIGIN)
      .set('access-control-request-method', 'GET')
      .set('access-control-request-headers', 'authorization,last-event-id');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(PAGE_ORIGIN);
    const allowed = String(preflight.headers['access-control-allow-headers']).split(/,\s*/);
    expect(allowed.sort()).toEqual(['authorization', 'content-type', 'idempotency-key', 'last-event-id', 'x-request-id']);

    const answer = await request(service.server)
      .get('/v1/orders')
      .set('origin', PAGE_ORIGIN)
      .set('authorization', `Bearer ${await service.bearer('cors_reader', 'customer')}`)
      .expect(200);
    expect(String(answer.headers['access-control-expose-headers']).split(/,\s*/).sort()).toEqual([
      'idempotent-replayed',
      'ratelimit',
      'ratelimit-policy',
      'retry-after',
      'x-request-id',
    ]);
  });
});
