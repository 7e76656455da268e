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
 * A local OTLP/HTTP trace receiver, JSON or protobuf: every export POSTed to `/v1/traces` is kept,
 * raw (with its content type) and as spans.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly exports: { contentType: string; body: Buffer }[] = [];
  private constructor(
    private readonly server: Server,
    readonly endpoint: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const receiver = new OtlpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const contentType = String(request.headers['content-type']);
        if (request.method === 'POST' && request.url === '/v1/traces') receiver.receive(Buffer.concat(chunks), contentType);
        if (contentType.startsWith('application/x-protobuf')) {
          // An empty ExportTraceServiceResponse.
          response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        } else {
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        }
      });
    });
    return receiver;
  }

  private receive(body: Buffer, contentType: string) {
    this.exports.push({ contentType, body });
    if (contentType.startsWith('application/x-protobuf')) {
      this.spans.push(...decodeProtobufSpans(body));
      return;
    }
    if (!contentType.startsWith('application/json')) throw new Error(`the exporter sent ${contentType}, not OTLP/HTTP`);
    for (const resourceSpans of (JSON.parse(body.toString('utf8')) as OtlpTraces).resourceSpans ?? []) {
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

/** One field of a protobuf message: its number and its value (a number for varints and fixed ints, bytes otherwise). */
interface ProtobufField {
  field: number;
  value: bigint | Buffer;
}

/** The fields of one protobuf message, in order (protobuf's wire format: varint, 64-bit, length-delimited, 32-bit). */
function protobufFields(message: Buffer): ProtobufField[] {
  const fields: ProtobufField[] = [];
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = message[at++];
      if (byte === undefined) throw new Error('a protobuf varint runs past the end of its message');
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (at < message.length) {
    const key = Number(varint());
    const field = key >>> 3;
    switch (key & 7) {
      case 0:
        fields.push({ field, value: varint() });
        break;
      case 1:
        fields.push({ field, value: message.subarray(at, (at += 8)) });
        break;
      case 2: {
        const length = Number(varint());
        fields.push({ field, value: message.subarray(at, (at += length)) });
        break;
      }
      case 5:
        fields.push({ field, value: message.subarray(at, (at += 4)) });
        break;
      default:
        throw new Error(`protobuf wire type ${key & 7} is not used by OTLP`);
    }
  }
  return fields;
}

const messagesOf = (fields: ProtobufField[], field: number) =>
  fields.filter((entry) => entry.field === field && Buffer.isBuffer(entry.value)).map((entry) => entry.value as Buffer);
const bytesOf = (fields: ProtobufField[], field: number) => messagesOf(fields, field)[0];
const varintOf = (fields: ProtobufField[], field: number) =>
  fields.find((entry) => entry.field === field && typeof entry.value === 'bigint')?.value as bigint | undefined;

/** An AnyValue as OTLP/HTTP JSON's flattened attributes show it: a string, a boolean, a number. */
function anyValue(message: Buffer): unknown {
  const [entry] = protobufFields(message);
  if (!entry) return undefined;
  if (entry.field === 1) return (entry.value as Buffer).toString('utf8');
  if (entry.field === 2) return entry.value === 1n;
  if (entry.field === 3) return Number(BigInt.asIntN(64, entry.value as bigint));
  if (entry.field === 4) return (entry.value as Buffer).readDoubleLE(0);
  return (entry.value as Buffer).toString('hex');
}

function attributesOf(fields: ProtobufField[], field: number): Record<string, unknown> {
  return Object.fromEntries(
    messagesOf(fields, field).map((keyValue) => {
      const pair = protobufFields(keyValue);
      const value = bytesOf(pair, 2);
      return [bytesOf(pair, 1)?.toString('utf8') ?? '', value ? anyValue(value) : undefined];
    }),
  );
}

/** The spans of an OTLP ExportTraceServiceRequest in protobuf, shaped as the JSON ones. */
function decodeProtobufSpans(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of messagesOf(protobufFields(body), 1)) {
    const resourceFields = protobufFields(resourceSpans);
    const resourceMessage = bytesOf(resourceFields, 1);
    const resource = resourceMessage ? attributesOf(protobufFields(resourceMessage), 1) : {};
    for (const scopeSpans of messagesOf(resourceFields, 2)) {
      for (const spanMessage of messagesOf(protobufFields(scopeSpans), 2)) {
        const span = protobufFields(spanMessage);
        const parent = bytesOf(span, 4);
        const status = bytesOf(span, 15);
        spans.push({
          traceId: bytesOf(span, 1)?.toString('hex') ?? '',
          spanId: bytesOf(span, 2)?.toString('hex') ?? '',
          ...(parent && parent.length > 0 ? { parentSpanId: parent.toString('hex') } : {}),
          name: bytesOf(span, 5)?.toString('utf8') ?? '',
          kind: Number(varintOf(span, 6) ?? 0),
          attributes: attributesOf(span, 9),
          ...(status ? { status: { code: Number(varintOf(protobufFields(status), 3) ?? 0) } } : {}),
          resource,
        });
      }
    }
  }
  return spans;
}
