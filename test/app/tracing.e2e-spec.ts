import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { mintToken } from '../../src/auth/token-minter';
import { maskCardNumbersIn } from '../../src/logging/redaction';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startChildService, type ChildService } from '../support/child-service';
import { OtlpReceiver, SPAN_KIND_CLIENT, SPAN_KIND_SERVER } from '../support/otlp-receiver';
import { orderRequest } from '../support/provider-factories';
import { testDatabaseUrl } from '../support/test-database';
import { startTestSandbox } from '../support/test-service';

const JWT_SECRET = 'tracing-test-jwt-secret-0123456789abcdefghijk';
const CALLBACK_SECRET = 'tracing-test-callback-secret-0123456789abcdef';
/** The provider credentials the child and the sandbox share (the development defaults). */
const PROVIDER_SECRETS = ['sandbox-public-apikey', 'sandbox-private-secretkey', 'sandbox-sp-auth-token'];
/** Modules of OpenTelemetry's SDK and exporter (the API alone is a no-op and may be loaded). */
const SDK_MODULE = /[\\/]@opentelemetry[\\/](?!api[\\/])/;

/** `npm start`'s command, with the preload that reports every module the process loaded when it exits. */
function startChild(sandbox: RunningSandbox, env: Record<string, string>): Promise<ChildService & { loadedModules(): string[] }> {
  const report = join(mkdtempSync(join(tmpdir(), 'tracing-')), 'modules.json');
  return startChildService(
    {
      DATABASE_URL: testDatabaseUrl(),
      PROVIDER_BASE_URL: sandbox.url,
      AUTH_JWT_SECRET: JWT_SECRET,
      CALLBACK_SIGNING_SECRET: CALLBACK_SECRET,
      LOG_LEVEL: 'info',
      LOADED_MODULES_REPORT: report,
      ...env,
    },
    { nodeArgs: ['-r', '@swc-node/register', '-r', './test/support/report-loaded-modules.cjs', 'src/main.ts'] },
  ).then((child) => Object.assign(child, { loadedModules: () => JSON.parse(readFileSync(report, 'utf8')) as string[] }));
}

async function payIn(base: string, headers: Record<string, string> = {}) {
  const token = await mintToken({ sub: 'cust_traced', roles: ['customer'], ttl: '1h', secret: JWT_SECRET });
  const res = await fetch(`${base}/v1/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json', ...headers },
    body: JSON.stringify(orderRequest()),
  });
  return { res, token, order: (await res.json()) as { id: string; reference: string; status: string } };
}

/** SIGINT (a clean stop without draining) and the exit. */
async function stop(child: ChildService) {
  child.child.kill('SIGINT');
  expect(await child.exited).toEqual({ code: 0, signal: null });
}

async function waitFor<T>(what: string, find: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const logLinesOf = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('tracing with OpenTelemetry (OTLP/HTTP, JSON or protobuf)', () => {
  let sandbox: RunningSandbox;
  let receiver: OtlpReceiver;
  let child: ChildService | undefined;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    receiver = await OtlpReceiver.start();
  });
  afterEach(() => {
    if (child && child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    child = undefined;
  });
  afterAll(async () => {
    await receiver?.close();
    await sandbox?.close();
  });

  it.each([
    ['in OTLP/HTTP JSON (the default)', {}, 'http/json', 'application/json'],
    ['in OTLP/HTTP protobuf', { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, 'http/protobuf', 'application/x-protobuf'],
  ])(
    'traces a pay-in %s: the frontend trace continued, its HTTP, database and provider spans, traceparent sent on, trace ids in the logs, no secret in any attribute',
    async (_encoding, protocolEnv: Record<string, string>, protocol, contentType) => {
      const exportsBefore = receiver.exports.length;
      const spansBefore = receiver.spans.length;
      const started = await startChild(sandbox, {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        ...protocolEnv,
      });
      child = started;
      expect(logLinesOf(started.output()).find((line) => line.msg === 'tracing: spans exported over OTLP/HTTP')).toMatchObject({
        protocol,
      });
      const traceId = randomBytes(16).toString('hex');
      const frontendSpanId = randomBytes(8).toString('hex');

      const { res, token, order } = await payIn(started.base, { traceparent: `00-${traceId}-${frontendSpanId}-01` });
      expect(res.status).toBe(201);
      expect(order.status).toBe('PROCESSING');
      // The provider's callback (a trace of its own, with no traceparent), so that its URL's token meets the scan below.
      const callbackSpan = await waitFor('the callback request span', () =>
        receiver.spans
          .slice(spansBefore)
          .find((span) => span.kind === SPAN_KIND_SERVER && String(span.attributes['http.route']).startsWith('/v1/callbacks/')),
      );
      await stop(started);
      const exports = receiver.exports.slice(exportsBefore);
      expect(exports.length).toBeGreaterThan(0);
      expect(exports.map((sent) => sent.contentType.split(';')[0])).toEqual(exports.map(() => contentType));

      const spans = receiver.spansOf(traceId);
      const http = spans.filter((span) => span.kind === SPAN_KIND_SERVER);
      expect(http).toEqual([
        expect.objectContaining({
          name: 'POST /v1/orders',
          parentSpanId: frontendSpanId,
          attributes: expect.objectContaining({
            'http.request.method': 'POST',
            'http.route': '/v1/orders',
            'http.response.status_code': 201,
          }),
          resource: expect.objectContaining({ 'service.name': 'payments-bff' }),
        }),
      ]);
      const statements = spans.filter((span) => span.attributes['db.system'] === 'postgresql');
      // Two round trips: the order with its key claim before the call, its outcome after it.
      expect(statements.length).toBeGreaterThanOrEqual(2);
      expect(statements.map((span) => span.kind)).toEqual(statements.map(() => SPAN_KIND_CLIENT));
      expect(statements.filter((span) => span.parentSpanId === http[0].spanId).length).toBeGreaterThanOrEqual(2);
      for (const statement of statements) expect(statement.attributes['db.operation.name']).toMatch(/^[A-Z]+$/);

      const payinSpans = spans.filter((span) => span.attributes['provider.endpoint'] === 'payin.collect');
      expect(payinSpans).toHaveLength(1);
      expect(payinSpans[0]).toMatchObject({
        kind: SPAN_KIND_CLIENT,
        parentSpanId: http[0].spanId,
        attributes: expect.objectContaining({ 'http.response.status_code': 200 }),
      });
      // Nothing but this request's work in the frontend's trace.
      expect(spans.every((span) => span === http[0] || span.parentSpanId !== undefined)).toBe(true);

      // The provider received the trace, its parent the provider call's span.
      const payinRequests = sandbox.state.requestsTo('/api/agent/bills/v3', 'POST');
      const sent = payinRequests.find((request) => (request.body as { order_id?: string }).order_id === order.reference);
      expect(sent?.headers.traceparent).toBe(`00-${traceId}-${payinSpans[0].spanId}-01`);

      // Log lines of the request carry its trace.
      const lines = logLinesOf(started.output()).filter((line) => line.traceId === traceId);
      expect(lines.map((line) => line.msg)).toEqual(expect.arrayContaining(['provider call', 'http request']));
      expect(lines.every((line) => typeof line.spanId === 'string' && line.requestId !== undefined)).toBe(true);

      // No secret nor card-shaped value in any exported span name or attribute.
      const callbackToken = new URL((sent!.body as { successUrl: string }).successUrl).searchParams.get('token');
      expect(callbackToken).toBeTruthy();
      const secrets = [callbackToken!, token, JWT_SECRET, CALLBACK_SECRET, ...PROVIDER_SECRETS];
      const exportedSpans = receiver.spans.slice(spansBefore);
      const exported = exportedSpans.flatMap((span) => [span.name, ...Object.values(span.attributes).map(String)]);
      expect(exportedSpans).toContain(callbackSpan);
      expect(exported.length).toBeGreaterThan(20);
      for (const value of exported) {
        for (const secret of secrets) expect(value).not.toContain(secret);
        // Card-shaped as the redaction decides (maskCardNumbersIn): 13 to 19 digits standing alone, grouped
        // or not; a run inside a longer token (the hex of an `evt_…` id, a few ids in a hundred) is not one.
        expect(maskCardNumbersIn(value)).toBe(value);
      }

      // The SDK was loaded: the check of the next test can fail.
      expect(started.loadedModules().filter((path) => SDK_MODULE.test(path)).length).toBeGreaterThan(0);
    },
    120_000,
  );

  it.each([
    ['without OpenTelemetry variables', {}],
    ['with OTEL_SDK_DISABLED=true beside an endpoint', { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'RECEIVER' }],
  ])(
    '%s: no SDK module is loaded, nothing is exported, log lines carry no trace id',
    async (_case, env: Record<string, string>) => {
      const exportsBefore = receiver.exports.length;
      const started = await startChild(
        sandbox,
        Object.fromEntries(Object.entries(env).map(([name, value]) => [name, value === 'RECEIVER' ? receiver.endpoint : value])),
      );
      child = started;
      const traceId = randomBytes(16).toString('hex');
      const { res } = await payIn(started.base, { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` });
      expect(res.status).toBe(201);
      await stop(started);

      expect(started.loadedModules().filter((path) => SDK_MODULE.test(path))).toEqual([]);
      expect(receiver.exports.length).toBe(exportsBefore);
      const lines = logLinesOf(started.output());
      expect(lines.some((line) => line.msg === 'provider call')).toBe(true);
      expect(lines.filter((line) => 'traceId' in line || 'spanId' in line)).toEqual([]);
      // The frontend's traceparent is not sent on either: no trace was continued.
      const sent = sandbox.state.requestsTo('/api/agent/bills/v3', 'POST').at(-1);
      expect(sent?.headers.traceparent).toBeUndefined();
    },
    120_000,
  );
});
