import type { FastifyInstance } from 'fastify';
import { OtlpReceiver } from '../../test/support/otlp-receiver';
import { traceHttpRequests } from './http-tracing';
import fc from 'fast-check';
import {
  activeTraceIds,
  openTelemetryProblems,
  otlpProtocolOf,
  sqlOperationOf,
  startClientSpan,
  startServerSpan,
  startStatementSpan,
  startTracing,
  tracingConfigured,
  tracingEnabled,
  withActiveSpan,
  type RunningTracing,
} from './tracing';

describe('tracingConfigured', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' }, true],
    [{ OTEL_SERVICE_NAME: 'payments' }, false],
  ])('%j: %s', (env, expected) => {
    expect(tracingConfigured(env)).toBe(expected);
  });
});

describe('the OTLP protocol', () => {
  const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

  it.each([
    [{ ...ENDPOINT }, 'http/json'],
    [{ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, 'http/json'],
    [{ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: ' http/protobuf ' }, 'http/protobuf'],
    [{ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }, 'http/protobuf'],
    [{ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: ' ' }, 'http/protobuf'],
  ])('%j: exported in %s, no problem', (env, protocol) => {
    expect(openTelemetryProblems(env)).toEqual([]);
    expect(otlpProtocolOf(env)).toBe(protocol);
  });

  it.each([
    [{ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc'],
    [
      { ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' },
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
      'grpc',
    ],
    [{ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'HTTP/JSON' }, 'OTEL_EXPORTER_OTLP_PROTOCOL', 'HTTP/JSON'],
  ])('%j: refused, naming %s and %s', (env, name, value) => {
    expect(openTelemetryProblems(env)).toEqual([expect.stringContaining(`${name} must be http/protobuf or http/json (got "${value}")`)]);
  });

  it('is not checked while tracing is off (no endpoint, or the SDK disabled)', () => {
    expect(openTelemetryProblems({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual([]);
    expect(openTelemetryProblems({ ...ENDPOINT, OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual([]);
  });

  it('refuses any other value with one problem, and exports only in an accepted protocol', () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        const env = { ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: value };
        const accepted = ['', 'http/json', 'http/protobuf'].includes(value.trim());
        expect(openTelemetryProblems(env)).toHaveLength(accepted ? 0 : 1);
        expect(['http/json', 'http/protobuf']).toContain(otlpProtocolOf(env));
      }),
    );
  });
});

describe('sqlOperationOf', () => {
  it('is the first keyword of the statement, upper case', () => {
    expect(sqlOperationOf('\n  WITH claimed AS (SELECT 1) SELECT * FROM claimed')).toBe('WITH');
    expect(sqlOperationOf('select id from orders where id = $1')).toBe('SELECT');
    expect(sqlOperationOf('-- nothing')).toBe('UNKNOWN');
  });
});

describe('while tracing is off', () => {
  it('makes no span, has no trace ids and adds no HTTP hook', async () => {
    expect(tracingEnabled()).toBe(false);
    expect(await startTracing({})).toBeUndefined();
    expect(startServerSpan('GET /x', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, {})).toBeUndefined();
    expect(startClientSpan('provider x', {})).toBeUndefined();
    expect(startStatementSpan('orders_create', 'SELECT 1')).toBeUndefined();
    expect(activeTraceIds()).toBeUndefined();
    const addHook = jest.fn();
    traceHttpRequests({ addHook } as unknown as FastifyInstance);
    expect(addHook).not.toHaveBeenCalled();
  });
});

describe('while tracing is on (exported to a local OTLP/HTTP receiver)', () => {
  let receiver: OtlpReceiver;
  let tracing: RunningTracing | undefined;
  const previousEndpoint = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    // The exporter reads OpenTelemetry's variables from the process's environment.
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${receiver.endpoint}/v1/traces`;
    tracing = await startTracing(process.env);
  });
  afterAll(async () => {
    await tracing?.shutdown();
    if (previousEndpoint === undefined) delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = previousEndpoint;
    await receiver.close();
  });

  it('starts statement spans only within a trace, and log lines get the active span ids', () => {
    expect(tracingEnabled()).toBe(true);
    expect(startStatementSpan('orders_create', 'WITH x AS (SELECT 1) SELECT 1')).toBeUndefined();
    const request = startServerSpan('POST /v1/orders', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, {})!;
    withActiveSpan(request, () => {
      expect(activeTraceIds()).toEqual({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: request.spanContext().spanId });
      const statement = startStatementSpan('orders_create', 'WITH x AS (SELECT 1) SELECT 1');
      expect(statement).toBeDefined();
      statement!.end();
    });
    request.end();
  });
});
