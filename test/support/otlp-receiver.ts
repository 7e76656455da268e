import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One exported span, as OTLP/HTTP JSON carries it (ids in hex), with its attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  status?: { code?: number };
  /** The resource's attributes (service.name, …). */
  resource: Record<string, unknown>;
}

export const SPAN_KIND_SERVER = 2;
export const SPAN_KIND_CLIENT = 3;

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}
interface OtlpTraces {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { spans?: (Omit<ReceivedSpan, 'attributes' | 'resource'> & { attributes?: OtlpAttribute[] })[] }[];
  }[];
}

const flatten = (attributes: OtlpAttribute[] = []) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, Object.values(value)[0]]));

/**
 * A local OTLP/HTTP trace receiver (JSON, as the service's exporter sends it): every export POSTed
 * to `/v1/traces` is kept, raw and as spans.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly exports: string[] = [];
  private constructor(
    private readonly server: Server,
    readonly endpoint: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const receiver = new OtlpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        if (request.method === 'POST' && request.url === '/v1/traces') receiver.receive(body, String(request.headers['content-type']));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    return receiver;
  }

  private receive(body: string, contentType: string) {
    this.exports.push(body);
    if (!contentType.startsWith('application/json')) throw new Error(`the exporter sent ${contentType}, not OTLP/HTTP JSON`);
    for (const resourceSpans of (JSON.parse(body) as OtlpTraces).resourceSpans ?? []) {
      const resource = flatten(resourceSpans.resource?.attributes);
      for (const scope of resourceSpans.scopeSpans ?? [])
        for (const span of scope.spans ?? []) this.spans.push({ ...span, attributes: flatten(span.attributes), resource });
    }
  }

  spansOf(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((closed) => this.server.close(() => closed()));
  }
}
