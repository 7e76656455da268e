import type { FastifyReply } from 'fastify';

/**
 * What a client that stopped reading may owe before it is dropped: far more than the keep-alives
 * and few status events of a live stream, far less than what a stuck client could pile up.
 */
export const MAX_UNREAD_BYTES = 64 * 1024;

/** The head of every event stream: never cached, never buffered by a proxy (nginx reads X-Accel-Buffering). */
const EVENT_STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'private, no-cache, no-store, must-revalidate, max-age=0, no-transform',
  pragma: 'no-cache',
  expires: '0',
  'x-accel-buffering': 'no',
} as const;

/**
 * A text/event-stream answer written straight to the socket: no stream object, Observable or
 * timer per connection, so that an idle stream costs little more than its socket. Nothing is
 * sent before the first message, so that until then an error can still be answered as such (the
 * reply is then Fastify's again); from the first message on, the reply is ours (hijacked) and the
 * headers Fastify's hooks set (request id, security headers, CORS) go out with the stream's own.
 */
export class ServerSentEvents<M> {
  private opened = false;
  /** Whether the header block Node keeps was flattened (see flattenSentHead); kept so that the read is never optimised away. */
  private sentHeadFlat = false;

  constructor(
    private readonly reply: FastifyReply,
    private readonly format: (message: M) => string,
  ) {}

  /** The client has gone, or the stream was ended. */
  get closed(): boolean {
    const response = this.reply.raw;
    return response.writableEnded || response.destroyed || this.reply.request.raw.socket.destroyed;
  }

  /** Runs once the response is over: ended here, or its connection lost. */
  onClose(listener: () => void): void {
    this.reply.raw.once('close', listener);
  }

  send(message: M): void {
    if (this.closed) return;
    this.open();
    const response = this.reply.raw;
    response.write(this.format(message));
    // A client that does not read would otherwise make its unsent events grow without bound.
    if (response.writableLength > MAX_UNREAD_BYTES) response.destroy();
  }

  end(): void {
    if (this.closed) return;
    this.open();
    this.reply.raw.end();
  }

  private open() {
    if (this.opened) return;
    this.opened = true;
    this.reply.hijack();
    // One object handed to writeHead, not setHeader per header: the response then keeps only the
    // header block it sent, not a second copy of every header for getHeader().
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(this.reply.getHeaders()))
      if (value !== undefined) headers[name] = typeof value === 'number' ? String(value) : value;
    this.reply.raw.writeHead(200, Object.assign(headers, EVENT_STREAM_HEADERS));
    this.sentHeadFlat = flattenSentHead(this.reply.raw) >= 0;
    const socket = this.reply.request.raw.socket;
    // Events go out at once (no Nagle delay), and the connection has no idle timeout of its own.
    socket.setNoDelay(true);
    socket.setKeepAlive(true);
    socket.setTimeout(0);
  }
}

/**
 * Node keeps the header block a response sent (`_header`) for the response's whole life, as it built
 * it: a string concatenated from about sixty pieces, some 2.5 KB of heap for an idle stream that will
 * live for minutes. Reading one character of it makes V8 flatten it in place into one string of its
 * length (about 0.6 KB); the value is unchanged. Answers the first character code (-1 without a head).
 *
 * The one place that reads Node's private `_header` (Node offers no public way to reach the kept
 * block): server-sent-events.spec.ts pins that Node still keeps the sent block there, so that a
 * Node that renames it fails that test instead of silently keeping the pieces (this function then
 * answers -1 and changes nothing). The saving is measured in test/perf/sent-head-memory.perf-spec.ts.
 */
export function flattenSentHead(response: object): number {
  const head = (response as { _header?: unknown })._header;
  return typeof head === 'string' && head.length > 0 ? head.charCodeAt(0) : -1;
}
