import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { truncateUtf8 } from '../common/truncate-utf8';
import { describeAttemptError } from './attempt-error';
import { endSpan, startClientSpan, tracingEnabled } from '../tracing/tracing';
import { checkWebhookUrl, guardedLookup, WebhookUrlRefused, type AgentLookup, type WebhookUrlPolicy } from './webhook-url-policy';

/** What is kept of an answer (`webhook_attempts.response_body`). */
export const RESPONSE_KEPT_BYTES = 1024;
/** What is read of an answer at most; past it the connection is dropped (the status already decided). */
export const RESPONSE_READ_BYTES = 64 * 1024;

/** One attempt to deliver one event to one endpoint. */
export interface WebhookRequest {
  url: string;
  /** The event id: the `webhook-id` header, the same on every attempt. */
  eventId: string;
  body: string;
  /** Every secret that signs it (during a rotation, the new one first). */
  signatureHeader: (timestamp: number) => string;
}

export interface WebhookAttemptResult {
  /** 2xx within the timeout. */
  delivered: boolean;
  /** The answer's status, when one arrived (redirects included: never followed, a failure). */
  httpStatus?: number;
  durationMs: number;
  /** Why the attempt failed without an acceptable answer (timeout, refused URL, connection error, redirect, status). */
  error?: string;
  /** The first 1 KiB of the answer, as UTF-8 text with NUL replaced (storable). */
  responseBody?: string;
  /** `Retry-After` of a 429 or 503, in seconds (delta or HTTP date). */
  retryAfterSeconds?: number;
  /** 410 Gone: the endpoint asks not to be called any more. */
  gone: boolean;
  /** When the attempt started. */
  at: Date;
}

/**
 * Sends webhook attempts with plain node `http`/`https` (no redirect is ever followed: node does
 * not follow them), through keep-alive agents whose DNS lookup is `guardedLookup`: the addresses a
 * name resolves to are checked at each connection, against DNS rebinding. The URL itself is checked
 * again before each attempt (the policy may have changed, an IP literal never reaches the lookup).
 * One timeout bounds the whole attempt, from connecting to the end of the (bounded) answer.
 */
export class WebhookSender {
  private readonly httpAgent: HttpAgent;
  private readonly httpsAgent: HttpsAgent;

  constructor(
    private readonly policy: WebhookUrlPolicy,
    private readonly timeoutMs: number,
    lookup: AgentLookup = guardedLookup(policy),
    maxSockets = 64,
  ) {
    const options = {
      keepAlive: true,
      maxSockets,
      maxFreeSockets: 16,
      timeout: timeoutMs,
      lookup: lookup as never,
      scheduling: 'lifo' as const,
    };
    this.httpAgent = new HttpAgent(options);
    this.httpsAgent = new HttpsAgent(options);
  }

  async send(attempt: WebhookRequest, now: () => Date = () => new Date()): Promise<WebhookAttemptResult> {
    if (!tracingEnabled()) return this.attempt(attempt, now);
    // The event and the endpoint's host: never its URL, whose path or query may hold the merchant's own secret.
    const span = startClientSpan('webhook attempt', { 'webhook.event_id': attempt.eventId, 'server.address': hostOf(attempt.url) });
    const result = await this.attempt(attempt, now);
    if (span) {
      const status = result.httpStatus === undefined ? {} : { 'http.response.status_code': result.httpStatus };
      endSpan(span, { 'webhook.delivered': result.delivered, ...status }, result.delivered ? undefined : attemptFailureType(result));
    }
    return result;
  }

  private async attempt(attempt: WebhookRequest, now: () => Date): Promise<WebhookAttemptResult> {
    const at = now();
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let url: URL;
    try {
      url = checkWebhookUrl(attempt.url, this.policy);
    } catch (error) {
      const reason = error instanceof WebhookUrlRefused ? error.message : describeAttemptError(error);
      return { delivered: false, durationMs: elapsed(), error: `URL refused: ${reason}`, gone: false, at };
    }
    const timestamp = Math.floor(at.getTime() / 1000);
    const headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(attempt.body)),
      'user-agent': 'payments-bff-webhooks/1',
      'webhook-id': attempt.eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': attempt.signatureHeader(timestamp),
    };
    try {
      const answer = await this.exchange(url, headers, attempt.body);
      const status = answer.status;
      const delivered = status >= 200 && status < 300;
      const result: WebhookAttemptResult = {
        delivered,
        httpStatus: status,
        durationMs: elapsed(),
        responseBody: answer.body,
        gone: status === 410,
        at,
      };
      if (!delivered) result.error = status >= 300 && status < 400 ? `redirect (${status}) not followed` : `HTTP ${status}`;
      if (status === 429 || status === 503) result.retryAfterSeconds = parseRetryAfter(answer.retryAfter, at);
      return result;
    } catch (error) {
      return { delivered: false, durationMs: elapsed(), error: describeAttemptError(error), gone: false, at };
    }
  }

  /** Closes the idle keep-alive connections. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private exchange(
    url: URL,
    headers: Record<string, string>,
    body: string,
  ): Promise<{ status: number; body: string; retryAfter?: string }> {
    return new Promise((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const send = secure ? httpsRequest : httpRequest;
      let settled = false;
      const finish = (error: Error | undefined, value?: { status: number; body: string; retryAfter?: string }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(value!);
      };
      const req = send(url, { method: 'POST', headers, agent: secure ? this.httpsAgent : this.httpAgent }, (res: IncomingMessage) => {
        const kept: Buffer[] = [];
        let keptBytes = 0;
        let read = 0;
        const done = () =>
          finish(undefined, {
            status: res.statusCode ?? 0,
            body: storableHead(Buffer.concat(kept)),
            retryAfter: headerText(res.headers['retry-after']),
          });
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (keptBytes < RESPONSE_KEPT_BYTES) {
            const part = chunk.subarray(0, RESPONSE_KEPT_BYTES - keptBytes);
            kept.push(part);
            keptBytes += part.length;
          }
          // Enough read: the status has decided; the connection is dropped rather than drained.
          if (read > RESPONSE_READ_BYTES) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', (error) => finish(error));
        res.on('aborted', () => finish(new Error('the answer was cut short')));
      });
      const timer = setTimeout(() => {
        const error = new Error(`no complete answer within ${this.timeoutMs} ms`);
        (error as NodeJS.ErrnoException).code = 'ETIMEDOUT';
        finish(error);
        req.destroy(error);
      }, this.timeoutMs);
      req.on('error', (error) => finish(error));
      req.end(body);
    });
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return 'invalid';
  }
}

/** A failed attempt's `error.type`: its status, or the kind of its error (never the message, which may name addresses). */
function attemptFailureType(result: WebhookAttemptResult): string {
  if (result.httpStatus !== undefined) return String(result.httpStatus);
  const error = result.error ?? '';
  if (error.startsWith('timeout')) return 'timeout';
  if (error.startsWith('URL refused')) return 'url_refused';
  return /^([A-Z][A-Z0-9_]+):/.exec(error)?.[1] ?? 'connection_error';
}

/** `Retry-After`: delay seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now.getTime()) / 1000));
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function storableHead(bytes: Buffer): string {
  return truncateUtf8(bytes.toString('utf8'), RESPONSE_KEPT_BYTES)
    .replaceAll('\u0000', '\uFFFD')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}
