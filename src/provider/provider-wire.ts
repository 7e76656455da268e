import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/**
 * The largest answer read from the provider, in bytes. Its answers are small JSON documents; the
 * largest, a card's transaction listing, is not documented, hence the room. An answer that goes past
 * it is not read to its end (the connection is closed) and is a ProviderBadResponseError.
 */
export const PROVIDER_ANSWER_MAX_BYTES = 4 * 1024 * 1024;
/** The largest request body sent (ours are small JSON documents): past it nothing is sent. */
const PROVIDER_REQUEST_MAX_BYTES = 1024 * 1024;
/** The TCP keep-alive delay of the provider's sockets. */
const TCP_KEEPALIVE_DELAY_MS = 60_000;

/** Codes of a rejected exchange (besides the system's: ECONNREFUSED, ECONNRESET, ...), read by wireFailure. */
export const WIRE_CODES = {
  /** No activity for PROVIDER_TIMEOUT_MS, or no head within it. */
  timeout: 'ETIMEDOUT',
  /** The request body past PROVIDER_REQUEST_MAX_BYTES: refused before anything was written. */
  requestTooLarge: 'ERR_REQUEST_TOO_LARGE',
  /** The answer past PROVIDER_ANSWER_MAX_BYTES: the connection closed before its end. */
  answerTooLarge: 'ERR_ANSWER_TOO_LARGE',
  /** The connection closed before the whole answer was read. */
  cut: 'ECONNRESET',
} as const;

/** An answer read whole: its status, its head, its body decoded as UTF-8. */
export interface WireAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A rejected exchange: a plain Error with a code (never the request's headers), and the status of an answer begun. */
export type WireError = Error & { code?: string; status?: number };

/**
 * The HTTP exchanges with one provider host, on node:http and node:https (ADR 0015):
 *
 * - keep-alive agents: one TLS handshake, not one per payment; destroyed at shutdown;
 * - any status is an answer; no redirect is followed (a 3xx is the answer), no proxy of the
 *   environment is taken, nothing is decompressed (no Accept-Encoding is sent), no User-Agent;
 * - the timeout: PROVIDER_TIMEOUT_MS of silence on the socket, for the whole exchange (before the
 *   head and in the middle of the body), and, until the head arrives, a deadline counted from the
 *   start of the request, connecting included (code ETIMEDOUT either way);
 * - the request body at most PROVIDER_REQUEST_MAX_BYTES (past it nothing is sent); the answer read
 *   as bytes, at most PROVIDER_ANSWER_MAX_BYTES, then decoded whole (a UTF-8 character split
 *   between chunks stays whole).
 */
export class ProviderWire {
  private readonly agents = {
    http: new HttpAgent({ keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE_DELAY_MS }),
    https: new HttpsAgent({ keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE_DELAY_MS }),
  };

  constructor(private readonly timeoutMs: number) {}

  destroy(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  exchange(url: string, method: string, headers: Record<string, string>, body?: string): Promise<WireAnswer> {
    return new Promise<WireAnswer>((resolve, reject) => {
      const bodyBytes = body === undefined ? 0 : Buffer.byteLength(body);
      if (bodyBytes > PROVIDER_REQUEST_MAX_BYTES)
        return reject(wireError(WIRE_CODES.requestTooLarge, `request body of ${bodyBytes} bytes, over ${PROVIDER_REQUEST_MAX_BYTES}`));
      const target = new URL(url);
      const secure = target.protocol === 'https:';
      let settled = false;
      let timedOut = false;
      let status: number | undefined;
      const timeoutError = () => wireError(WIRE_CODES.timeout, `no activity from the provider for ${this.timeoutMs} ms`);
      // After a timeout, whatever the destroyed socket reports is the timeout.
      const fail = (error: WireError) => {
        if (settled) return;
        settled = true;
        clearTimeout(headDeadline);
        const failure = timedOut ? timeoutError() : error;
        if (status !== undefined) failure.status = status;
        reject(failure);
      };
      const onTimeout = () => {
        timedOut = true;
        outgoing.destroy(timeoutError());
      };
      let outgoing: ReturnType<typeof httpRequest>;
      try {
        outgoing = (secure ? httpsRequest : httpRequest)(target, {
          method,
          agent: secure ? this.agents.https : this.agents.http,
          headers: body === undefined ? headers : { ...headers, 'content-length': String(bodyBytes) },
        });
      } catch (error) {
        // An unusable header value or method (ERR_INVALID_CHAR, ERR_INVALID_HTTP_TOKEN): nothing was sent.
        return reject(plainError(error));
      }
      const headDeadline = setTimeout(onTimeout, this.timeoutMs);
      outgoing.setTimeout(this.timeoutMs, onTimeout);
      outgoing.on('error', (error) => fail(plainError(error)));
      outgoing.on('response', (incoming) => {
        clearTimeout(headDeadline);
        status = incoming.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let read = 0;
        incoming.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > PROVIDER_ANSWER_MAX_BYTES) {
            fail(wireError(WIRE_CODES.answerTooLarge, `answer of more than ${PROVIDER_ANSWER_MAX_BYTES} bytes`));
            outgoing.destroy();
            return;
          }
          chunks.push(chunk);
        });
        incoming.on('error', (error) => fail(plainError(error)));
        incoming.on('end', () => {
          if (settled) return;
          settled = true;
          resolve({ status: status ?? 0, headers: incoming.headers, text: Buffer.concat(chunks, read).toString('utf8') });
        });
        // A connection lost mid-answer: 'end' never comes.
        incoming.on('close', () => {
          if (!incoming.complete) fail(wireError(WIRE_CODES.cut, 'the connection closed before the whole answer was read'));
        });
      });
      outgoing.end(body);
    });
  }
}

function wireError(code: string, message: string): WireError {
  return Object.assign(new Error(message), { code });
}

/** The message and code of what node:http raised, nothing else of it. */
function plainError(error: unknown): WireError {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return wireError(typeof code === 'string' ? code : 'ECONNRESET', typeof message === 'string' ? message : String(error));
}
