import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { mintToken } from '../../src/auth/token-minter';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startChildService, type ChildService } from '../support/child-service';
import { OtlpReceiver } from '../support/otlp-receiver';
import { buildOncePerRun } from '../support/production-build';
import { orderRequest } from '../support/provider-factories';
import { testDatabaseUrl } from '../support/test-database';
import { startProdCommand, startProdEnvironment } from '../support/start-prod-command';
import { startTestSandbox } from '../support/test-service';

const JWT_SECRET = 'production-bundle-test-jwt-secret-0123456789';

/**
 * What `npm run build` makes and `npm run start:prod` (and the image) runs: the service bundled
 * into one file (scripts/bundle.mjs), in production mode. Built here from this checkout, then
 * served end to end: what a bundle can break is what is checked (packages NestJS loads by name,
 * files found next to a package's code, `import.meta.url` of the ESM packages, the migrations
 * found from the bundle's directory).
 */
describe('the production bundle (npm run build, npm run start:prod)', () => {
  let sandbox: RunningSandbox;
  let service: ChildService;
  let token: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    await buildOncePerRun();
    sandbox = await startTestSandbox();
    const command = startProdCommand();
    env = {
      ...startProdEnvironment({ databaseUrl: testDatabaseUrl(), providerBaseUrl: sandbox.url, jwtSecret: JWT_SECRET }),
      LOG_LEVEL: 'info',
    };
    service = await startChildService(env, { nodeArgs: command.nodeArgs, readyPath: '/health/ready' });
    token = await mintToken({ sub: 'bundle-customer', roles: ['customer'], ttl: '1h', secret: JWT_SECRET });
  }, 540_000);

  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGTERM');
    await service?.exited;
    await sandbox?.close();
  });

  it('runs the one file, in production mode, ready once its migrations are found applied', async () => {
    expect(startProdCommand().nodeArgs.at(-1)).toBe('dist/main.bundle.js');
    const ready = await fetch(`${service.base}/health/ready`);
    expect(ready.status).toBe(200);
  });

  it('validates input field by field (class-validator and class-transformer are the ones NestJS loads)', async () => {
    const res = await fetch(`${service.base}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'bundle-bad-body' },
      body: JSON.stringify({ ...orderRequest(), amount: 'twelve', payerEmail: 'not an email' }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await res.json()) as { errors: { field: string }[] };
    expect(problem.errors.map((e) => e.field).sort()).toEqual(['amount', 'payerEmail']);
    const page = await fetch(`${service.base}/v1/orders?limit=5000`, { headers: { authorization: `Bearer ${token}` } });
    expect(page.status).toBe(400);
  });

  it('takes a pay-in to the provider and reads it back', async () => {
    const created = await fetch(`${service.base}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `bundle-${Date.now()}` },
      body: JSON.stringify(orderRequest()),
    });
    expect(created.status).toBe(201);
    const order = (await created.json()) as { id: string; status: string; amount: string };
    expect(order).toMatchObject({ status: 'PROCESSING', amount: '1500' });
    const read = await fetch(`${service.base}/v1/orders/${order.id}`, { headers: { authorization: `Bearer ${token}` } });
    expect(read.status).toBe(200);
    const list = (await (await fetch(`${service.base}/v1/orders`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      items: { id: string }[];
    };
    expect(list.items.map((o) => o.id)).toContain(order.id);
  });

  it('serves the Swagger UI with its assets and the OpenAPI document', async () => {
    const page = await fetch(`${service.base}/docs`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui');
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css', 'swagger-ui-init.js']) {
      const res = await fetch(`${service.base}/docs/${asset}`);
      expect([asset, res.status]).toEqual([asset, 200]);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
    const document = (await (await fetch(`${service.base}/docs-json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toContain('/v1/orders');
  });

  it.each([
    ['http/json', 'application/json'],
    ['http/protobuf', 'application/x-protobuf'],
  ])(
    'traces with OpenTelemetry when its variables are set (%s): a pay-in is one trace of HTTP, statement and provider spans',
    async (protocol, contentType) => {
      const receiver = await OtlpReceiver.start();
      const traced = await startChildService(
        { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_BSP_SCHEDULE_DELAY: '100' },
        { nodeArgs: startProdCommand().nodeArgs, readyPath: '/health/ready' },
      );
      try {
        const traceId = randomBytes(16).toString('hex');
        const created = await fetch(`${traced.base}/v1/orders`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'idempotency-key': `bundle-traced-${Date.now()}`,
            traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
          },
          body: JSON.stringify(orderRequest()),
        });
        expect(created.status).toBe(201);
        // SIGINT: a clean stop without the production drain; the buffered spans are exported before the exit.
        traced.child.kill('SIGINT');
        expect(await traced.exited).toEqual({ code: 0, signal: null });
        expect(receiver.spansOf(traceId).map((span) => span.name)).toEqual(
          expect.arrayContaining(['POST /v1/orders', 'orders_create', 'provider payin.collect', 'orders_record_submission']),
        );
        expect(new Set(receiver.exports.map((sent) => sent.contentType.split(';')[0]))).toEqual(new Set([contentType]));
      } finally {
        if (traced.child.exitCode === null) traced.child.kill('SIGKILL');
        await receiver.close();
      }
    },
    60_000,
  );

  it('stops cleanly on SIGTERM', async () => {
    service.child.kill('SIGTERM');
    // Well within the grace period an orchestrator gives (Kubernetes: 30 s); what it printed if not.
    const stopped = await Promise.race([
      service.exited,
      sleep(20_000).then(() => `still running 20 s after SIGTERM; its last output:\n${service.output().slice(-4000)}`),
    ]);
    expect(stopped).toEqual({ code: 0, signal: null });
  });
});
