import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter as OtlpJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';

/** The encodings of OTLP over HTTP that spans are exported in; `http/json` unless chosen. */
export type OtlpProtocol = 'http/json' | 'http/protobuf';

/** `service.name` when OTEL_SERVICE_NAME is not set. */
export const DEFAULT_SERVICE_NAME = 'payments-bff';

/**
 * OpenTelemetry's SDK, registered as the process's tracer provider: spans batched and exported
 * over OTLP/HTTP, in `protocol`'s encoding, to the collector OpenTelemetry's variables name (the
 * exporter reads the endpoint, headers, timeout and compression; the provider the sampler and the
 * batch sizes), the W3C trace context propagator, and the AsyncLocalStorage context manager that
 * carries the active span through every await. Loaded only when tracing is configured
 * (startTracing): a process without it never loads the SDK.
 */
export function registerTracerProvider(env: NodeJS.ProcessEnv, protocol: OtlpProtocol): NodeTracerProvider {
  const resource = resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME?.trim() || DEFAULT_SERVICE_NAME }).merge(
    // OTEL_RESOURCE_ATTRIBUTES (deployment.environment, service.version, ...); OTEL_SERVICE_NAME already applied.
    detectResources({ detectors: [envDetector] }),
  );
  const exporter = protocol === 'http/protobuf' ? new OtlpProtobufTraceExporter() : new OtlpJsonTraceExporter();
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  return provider;
}
