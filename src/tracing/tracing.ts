import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
// A type only: the SDK's modules are loaded by startTracing alone.
import type { OtlpProtocol } from './tracing-sdk';

/**
 * Tracing of our own seams (the HTTP request, each database statement, each provider call, each
 * webhook delivery attempt) through OpenTelemetry's API. Until startTracing registers the SDK,
 * `tracer` is undefined and every helper here returns at its first line: an instance without
 * OpenTelemetry's variables creates no span, allocates no context and loads no SDK module.
 *
 * What spans carry is chosen, never copied: route patterns, statement names, provider endpoint
 * names, host names and status codes. Never a URL path or query (callback URLs carry signed
 * tokens), a header, a statement's values or a body.
 */
let tracer: Tracer | undefined;

export interface RunningTracing {
  /** The encoding spans are exported in. */
  protocol: OtlpProtocol;
  /** Exports the spans still buffered, then stops exporting. */
  shutdown(): Promise<void>;
}

/** True when OpenTelemetry's variables ask for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingConfigured(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

const OTLP_PROTOCOLS: readonly string[] = ['http/json', 'http/protobuf'] satisfies OtlpProtocol[];

/** The variable that chooses the traces' protocol, and its value: the traces' own first, as OpenTelemetry ranks them. */
function protocolSetting(env: NodeJS.ProcessEnv): { name: string; value: string } | undefined {
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

/**
 * What this service cannot honour in OpenTelemetry's variables, one sentence each (none while
 * tracing is off): a protocol other than OTLP over HTTP would otherwise be ignored, and every span
 * sent to a collector that does not read it (a gRPC port answers HTTP/1.1 with an error).
 */
export function openTelemetryProblems(env: NodeJS.ProcessEnv): string[] {
  const protocol = protocolSetting(env);
  if (!tracingConfigured(env) || !protocol || OTLP_PROTOCOLS.includes(protocol.value)) return [];
  return [
    `${protocol.name} must be http/protobuf or http/json (got "${protocol.value}"): spans are exported over OTLP/HTTP, ` +
      "to the collector's HTTP port (4318), not over gRPC",
  ];
}

/** The protocol spans are exported in (`env` checked by openTelemetryProblems). */
export function otlpProtocolOf(env: NodeJS.ProcessEnv): OtlpProtocol {
  return protocolSetting(env)?.value === 'http/protobuf' ? 'http/protobuf' : 'http/json';
}

/**
 * Registers OpenTelemetry's SDK when `env` configures it (see tracingConfigured); undefined, and
 * nothing loaded, otherwise. Called once by the entry point, before the application is built.
 */
export async function startTracing(env: NodeJS.ProcessEnv): Promise<RunningTracing | undefined> {
  if (!tracingConfigured(env)) return undefined;
  const { registerTracerProvider } = await import('./tracing-sdk');
  const protocol = otlpProtocolOf(env);
  const provider = registerTracerProvider(env, protocol);
  tracer = trace.getTracer('payments-bff');
  return {
    protocol,
    async shutdown() {
      tracer = undefined;
      await provider.shutdown();
    },
  };
}

/** Whether spans are being made (the SDK is registered). */
export function tracingEnabled(): boolean {
  return tracer !== undefined;
}

/** The ids of the active span, for log lines; undefined when tracing is off or no span is active. */
export function activeTraceIds(): { traceId: string; spanId: string } | undefined {
  if (!tracer) return undefined;
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}

/**
 * A server span continuing the trace of `headers` (W3C `traceparent`; a new trace without one).
 * Undefined when tracing is off. Run the request's work with it active (withActiveSpan).
 */
export function startServerSpan(name: string, headers: Record<string, unknown>, attributes: Attributes): Span | undefined {
  if (!tracer) return undefined;
  return tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, propagation.extract(context.active(), headers));
}

/**
 * A client span, child of the active span when there is one (a root otherwise), not made active
 * itself (nothing runs under it). Undefined when tracing is off.
 */
export function startClientSpan(name: string, attributes: Attributes): Span | undefined {
  return tracer?.startSpan(name, { kind: SpanKind.CLIENT, attributes });
}

/**
 * A client span for one database statement (`text` gives its `db.operation.name`), only within a
 * trace (a request's, a delivery attempt's): the background jobs' polls do not each start a trace
 * of their own. Never the statement's values.
 */
export function startStatementSpan(name: string, text: string): Span | undefined {
  if (!tracer || !trace.getActiveSpan()) return undefined;
  return tracer.startSpan(name, {
    kind: SpanKind.CLIENT,
    attributes: { 'db.system': 'postgresql', 'db.system.name': 'postgresql', 'db.operation.name': sqlOperationOf(text) },
  });
}

/** Runs `work` with `span` active and ends the span when it settles (a rejection sets its error status). */
export async function inSpan<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    const result = await withActiveSpan(span, work);
    span.end();
    return result;
  } catch (error) {
    endSpan(span, {}, failureTypeOf(error));
    throw error;
  }
}

/** What `error.type` says of a failure: its code (a SQLSTATE, a network or provider error code) or its class, never its message. */
export function failureTypeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' || typeof code === 'number') return String(code);
  return error instanceof Error ? error.constructor.name : typeof error;
}

/** Runs `work` with `span` active, so that the spans it starts are its children. */
export function withActiveSpan<T>(span: Span, work: () => T): T {
  return context.with(trace.setSpan(context.active(), span), work);
}

/** The W3C trace context headers (`traceparent`, and `tracestate` when there is one) that make `span` the parent of the receiver's work. */
export function traceContextHeaders(span: Span): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), headers);
  return headers;
}

/** Ends `span` with its last attributes; a failure sets its status to error with `error.type` (a code or a class of failure, never a message). */
export function endSpan(span: Span, attributes: Attributes, failure?: string): void {
  span.setAttributes(attributes);
  if (failure !== undefined) span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute('error.type', failure);
  span.end();
}

/** The first keyword of a statement (`SELECT`, `INSERT`, `WITH`, …): its `db.operation.name`. */
export function sqlOperationOf(text: string): string {
  return /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'UNKNOWN';
}
