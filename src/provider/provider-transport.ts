import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Axios } from 'axios';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import { APP_LOGGER } from '../logging/logging.module';
import { scrubProviderBody, scrubText, sentTextContext } from '../logging/provider-body-scrub';
import { redact, redactUrl, registerConfiguredSecrets } from '../logging/redaction';
import { storableJson, storableText } from '../logging/storable-text';
import { currentRequestId } from '../logging/request-context';
import { MetricsService } from '../metrics/metrics.service';
import { endSpan, startClientSpan, traceContextHeaders, tracingEnabled } from '../tracing/tracing';
import { answerShapeOf } from './provider-answer-shapes';
import { ProviderCallLog } from './provider-call-log';
import {
  ProviderBadResponseError,
  ProviderConnectionLostError,
  ProviderError,
  type ProviderErrorShape,
  ProviderRateLimitedError,
  ProviderRejectedError,
  ProviderServerError,
  ProviderTimeoutError,
  ProviderUnauthorizedError,
  ProviderUnreachableError,
} from './provider.errors';

export type ProviderHost = 'base' | 'link';
export type ProviderArea = 'auth' | 'payin' | 'cards' | 'wallet-links' | 'distributions';

export interface ProviderRequest {
  area: ProviderArea;
  /** Logical name, stable for logs and metrics: `payin.collect`, `cards.get`, ... */
  endpoint: string;
  host: ProviderHost;
  method: 'GET' | 'POST';
  /** Path with its parameters already encoded. */
  path: string;
  query?: Record<string, string | number>;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface ProviderResponse<T = unknown> {
  status: number;
  data: T;
}

/** What came back on the wire, before interpretation. */
export interface RawProviderAnswer {
  status: number;
  body: unknown;
  /** True when the body was not JSON (kept as text in `body`). */
  nonJson: boolean;
  retryAfter?: string;
}

/**
 * The largest answer read from the provider, in bytes. Its answers are small JSON documents; the
 * largest, a card's transaction listing, is not documented, hence the room. An answer that goes past
 * it is not read to its end (the connection is closed) and is a ProviderBadResponseError.
 */
export const PROVIDER_ANSWER_MAX_BYTES = 4 * 1024 * 1024;
/** The largest request body sent (ours are small JSON documents): past it nothing is sent. */
const PROVIDER_REQUEST_MAX_BYTES = 1024 * 1024;

/**
 * ERR_BAD_REQUEST: axios refused to send (a body past maxBodyLength, an unusable URL): it is raised
 * before anything is written, as is every other code of this set.
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_INVALID_URL',
  'ERR_BAD_REQUEST',
]);
const TIMEOUT_CODES = new Set(['ECONNABORTED', 'ETIMEDOUT']);

/**
 * The wire: one HTTP exchange with the provider, with its timeout, its log line, its call-log row
 * (both redacted) and the translation of every failure into a typed ProviderError. Knows nothing
 * of tokens or budgets (ProviderHttpClient adds those).
 *
 * It is also the provider boundary: what the provider said is scrubbed here, once, as it is
 * parsed, before any caller, error message, log line or stored row can see it: the fields the
 * clients read are kept by the endpoint's shape (provider-answer-shapes.ts), the secrets it
 * delivers registered first; every other text loses its digit runs but those of the request
 * (`scrubProviderBody`), and NULs.
 */
@Injectable()
export class ProviderTransport implements OnApplicationShutdown {
  private readonly providerConfig: AppConfig['provider'];

  /** One axios instance per provider host, each with its own keep-alive agents (see providerClient). */
  private readonly clients: Record<ProviderHost, ProviderClient>;

  constructor(
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
    private readonly calls: ProviderCallLog,
    private readonly metrics: MetricsService,
  ) {
    this.providerConfig = config.get('provider', { infer: true });
    registerConfiguredSecrets({
      provider: this.providerConfig,
      auth: config.get('auth', { infer: true }),
      callbackSigningSecret: config.get('callbackSigningSecret', { infer: true }),
      callbackSigningPreviousSecrets: config.get('callbackSigningPreviousSecrets', { infer: true }),
      dataEncryptionKey: config.get('dataEncryptionKey', { infer: true }),
      dataEncryptionPreviousKeys: config.get('dataEncryptionPreviousKeys', { infer: true }),
    });
    this.clients = { base: providerClient(this.providerConfig.timeoutMs), link: providerClient(this.providerConfig.timeoutMs) };
  }

  onApplicationShutdown() {
    for (const { agents } of Object.values(this.clients)) {
      agents.http.destroy();
      agents.https.destroy();
    }
  }

  urlFor(request: ProviderRequest): string {
    const base = request.host === 'link' ? this.providerConfig.linkBaseUrl : this.providerConfig.baseUrl;
    if (!base) throw new Error(`provider ${request.host} URL is not configured`);
    const url = new URL(base + request.path);
    for (const [name, value] of Object.entries(request.query ?? {})) url.searchParams.set(name, String(value));
    return url.toString();
  }

  /** Sends the request; resolves with whatever status came back, rejects only when no answer was read. */
  async exchange(request: ProviderRequest, headers: Record<string, string>): Promise<RawProviderAnswer> {
    const url = this.urlFor(request);
    // Its endpoint's name and host, never the URL (paths and queries carry identifiers) nor a header (credentials).
    const span = tracingEnabled()
      ? startClientSpan(`provider ${request.endpoint}`, {
          'provider.endpoint': request.endpoint,
          'http.request.method': request.method,
          'server.address': new URL(url).hostname,
        })
      : undefined;
    const started = performance.now();
    let answer: RawProviderAnswer | undefined;
    let failure: ProviderError | undefined;
    try {
      const response = await this.clients[request.host].http.request<Buffer>({
        url,
        method: request.method,
        // `content-type: false`: axios would otherwise give a POST without a body a form content type.
        headers: {
          accept: 'application/json',
          'content-type': request.body === undefined ? false : 'application/json',
          ...headers,
          ...(span && traceContextHeaders(span)),
        },
        data: request.body === undefined ? undefined : JSON.stringify(request.body),
      });
      answer = parseAnswer(request, response.status, response.data.toString('utf8'), headerText(response.headers['retry-after']));
      return answer;
    } catch (error) {
      failure = this.networkFailure(error, request);
      throw failure;
    } finally {
      this.recordCall(request, url, Math.round(performance.now() - started), answer, failure);
      if (span)
        endSpan(
          span,
          answer ? { 'http.response.status_code': answer.status } : {},
          failure?.code ?? (answer && answer.status >= 500 ? String(answer.status) : undefined),
        );
    }
  }

  /**
   * Interprets a read answer: the data of a success, or the typed error of a refusal. A success
   * status whose JSON says `success: false` is a refusal too (the provider does not say which
   * status its init and distribution errors use).
   */
  interpret<T>(request: ProviderRequest, answer: RawProviderAnswer): ProviderResponse<T> {
    const { status, body } = answer;
    if (status >= 200 && status < 300) {
      if (answer.nonJson || body === null || typeof body !== 'object') {
        throw new ProviderBadResponseError(`The payment provider answered ${request.endpoint} with an unreadable body.`, {
          providerStatus: status,
        });
      }
      if ((body as { success?: unknown }).success === false) throw rejection(status, answer);
      return { status, data: body as T };
    }
    if (status === 401) {
      throw new ProviderUnauthorizedError('The payment provider refused the service credentials.', {
        providerStatus: status,
        providerMessage: messageOf(body),
      });
    }
    if (status === 429) {
      return throwRateLimited(answer);
    }
    if (status >= 500) {
      throw new ProviderServerError(`The payment provider failed on ${request.endpoint} (HTTP ${status}); the outcome is unknown.`, {
        providerStatus: status,
        providerMessage: answer.nonJson ? undefined : messageOf(body),
      });
    }
    throw rejection(status, answer);
  }

  /**
   * What a rejected exchange proves. The cause kept is a plain Error (message and code): never the
   * AxiosError, whose config holds the request's headers (the bearer token, the API key).
   */
  private networkFailure(error: unknown, request: ProviderRequest): ProviderError {
    const { code, message, response, request: sent } = (error ?? {}) as WireFailure;
    const cause = Object.assign(new Error(typeof message === 'string' ? message : String(error)), { code });
    // Past maxContentLength axios destroys the answer and rejects with ERR_BAD_RESPONSE and no
    // response (an answer cut short carries the response it had begun).
    if (code === 'ERR_BAD_RESPONSE' && response === undefined) {
      return new ProviderBadResponseError(
        `The payment provider answered ${request.endpoint} with more than ${PROVIDER_ANSWER_MAX_BYTES} bytes; the outcome is unknown.`,
        { providerStatus: sent?.res?.statusCode, cause },
      );
    }
    if (code && TIMEOUT_CODES.has(code)) {
      return new ProviderTimeoutError(
        `The payment provider did not answer ${request.endpoint} within ${this.providerConfig.timeoutMs} ms; the outcome is unknown.`,
        { cause },
      );
    }
    if (code && NOT_SENT_CODES.has(code)) {
      return new ProviderUnreachableError(`The payment provider could not be reached for ${request.endpoint}; nothing was sent.`, {
        cause,
      });
    }
    return new ProviderConnectionLostError(
      `The connection to the payment provider broke during ${request.endpoint}; the outcome is unknown.`,
      { cause },
    );
  }

  private recordCall(request: ProviderRequest, url: string, durationMs: number, answer?: RawProviderAnswer, failure?: ProviderError) {
    const outcome = failure ? failure.code : answer && answer.status < 400 ? 'answered' : `http_${answer?.status}`;
    const safeUrl = redactUrl(url);
    this.metrics.providerCalls.inc({ endpoint: request.endpoint, outcome });
    this.metrics.providerDuration.observe({ endpoint: request.endpoint }, durationMs / 1000);
    const line = {
      area: request.area,
      endpoint: request.endpoint,
      method: request.method,
      url: safeUrl,
      status: answer?.status,
      durationMs,
      outcome,
    };
    if (failure || (answer && answer.status >= 500)) this.logger.warn(line, 'provider call failed');
    else this.logger.info(line, 'provider call');
    this.calls.record({
      area: request.area,
      method: request.method,
      endpoint: request.endpoint,
      url: safeUrl,
      httpStatus: answer?.status,
      outcome,
      errorCode: failure?.code,
      durationMs,
      requestId: currentRequestId(),
      requestBody: redact(request.body),
      responseBody: answer
        ? // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a body that was not JSON is kept as text, so String() only copies it
          redact(answer.nonJson ? { text: answer.body === null ? '' : String(answer.body).slice(0, 2000) } : answer.body)
        : undefined,
    });
  }
}

const NON_JSON_KEPT_CHARS = 8192;

interface ProviderClient {
  http: Axios;
  agents: { http: HttpAgent; https: HttpsAgent };
}

/**
 * The TCP keep-alive delay of the provider's sockets: axios sets 60 s on every socket it is given,
 * the agent its own `keepAliveMsecs` on every socket it takes back. The same value on both sides
 * leaves Node nothing to change (two to four setsockopt calls per exchange otherwise).
 */
const TCP_KEEPALIVE_DELAY_MS = 60_000;

/** What a rejected axios exchange (or an error thrown before it) may carry. */
interface WireFailure {
  code?: string;
  message?: unknown;
  response?: unknown;
  /** The ClientRequest, whose `res` is the answer whose head was read. */
  request?: { res?: { statusCode?: number } };
}

/**
 * The axios instance of one provider host. Any status is an answer; what rejects is a failure to
 * connect, to send or to read the whole answer, or PROVIDER_TIMEOUT_MS of silence (code ETIMEDOUT).
 *
 * - keep-alive agents: one TLS handshake, not one per payment; destroyed at shutdown (their TCP
 *   keep-alive delay is axios's: TCP_KEEPALIVE_DELAY_MS);
 * - `timeout`: with `maxRedirects: 0` axios sets it as the socket's idle timeout for the whole
 *   exchange (before the head and in the middle of the body) and, until the head arrives, as a
 *   deadline from the start of the request (connecting included): see docs/adr/0006;
 * - no redirect followed, no proxy taken from the environment, no decompression (no
 *   Accept-Encoding is sent), no User-Agent of axios's: the same request as node:http sent;
 * - the body read as bytes (`responseType: 'arraybuffer'`, no transformResponse: axios parses
 *   nothing), at most PROVIDER_ANSWER_MAX_BYTES, then decoded whole (a UTF-8 character split between
 *   chunks stays whole) and parsed by parseAnswer.
 *
 * Built once: a call only adds its URL, method, headers and body (no interceptor). Built as a bare
 * `Axios` from this configuration alone, not with `axios.create`, which layers it over axios's global
 * defaults: their header buckets (common and one per method), `env` and `transitional` were deep-merged
 * into every call's configuration (docs/performance.md), for values this client sets itself or never
 * uses (form data, XSRF cookies, browser adapters).
 */
function providerClient(timeoutMs: number): ProviderClient {
  const agents = {
    http: new HttpAgent({ keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE_DELAY_MS }),
    https: new HttpsAgent({ keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE_DELAY_MS }),
  };
  const http = new Axios({
    adapter: 'http',
    httpAgent: agents.http,
    httpsAgent: agents.https,
    proxy: false,
    maxRedirects: 0,
    validateStatus: () => true,
    timeout: timeoutMs,
    timeoutErrorMessage: `no activity from the provider for ${timeoutMs} ms`,
    transitional: { clarifyTimeoutError: true },
    decompress: false,
    responseType: 'arraybuffer',
    transformRequest: [],
    transformResponse: [],
    maxContentLength: PROVIDER_ANSWER_MAX_BYTES,
    maxBodyLength: PROVIDER_REQUEST_MAX_BYTES,
    // false: the header is not sent (axios adds its own only when none is set).
    headers: { 'User-Agent': false, 'Accept-Encoding': false },
  });
  return { http, agents };
}

function headerText(header: unknown): string | undefined {
  const value: unknown = Array.isArray(header) ? header[0] : header;
  return typeof value === 'string' ? value : undefined;
}

/** Parses and scrubs the provider's answer: nothing unscrubbed leaves this function. */
function parseAnswer(request: ProviderRequest, status: number, text: string | undefined, retryAfter?: string): RawProviderAnswer {
  const raw = text ?? '';
  if (raw.trim() === '') return { status, body: null, nonJson: true, retryAfter };
  // What the answer may repeat of the request: the values we sent, the identifiers of the path.
  const sent = sentTextContext({
    path: request.path.split('/').map(decodePathSegment),
    query: request.query,
    headers: request.headers,
    body: request.body,
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // Only its beginning is ever kept (in the call log): scrubbed whole up to there, before any cut.
    const scrubbed = scrubText(raw.slice(0, NON_JSON_KEPT_CHARS), { ...sent, secretRuns: new Set(), secretTexts: [] });
    return { status, body: storableText(scrubbed), nonJson: true, retryAfter };
  }
  return { status, body: storableJson(scrubProviderBody(parsed, answerShapeOf(request.endpoint), sent)), nonJson: false, retryAfter };
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function messageOf(body: unknown): string | undefined {
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.slice(0, 500) : undefined;
}

/** Recognises the provider's documented error bodies. */
export function errorShapeOf(body: unknown, nonJson: boolean): ProviderErrorShape {
  if (nonJson || body === null || typeof body !== 'object') return 'non_json';
  const b = body as Record<string, unknown>;
  if (b.success === false && b.status === 'FAILURE' && 'data' in b) return 'payin_failure_envelope';
  if (b.success === false && typeof b.code === 'string') return 'code_success_message';
  if (typeof b.error === 'number' && typeof b.message === 'string') return 'error_message';
  if (b.success === false) return 'success_false';
  return 'unrecognised_json';
}

function rejection(status: number, answer: RawProviderAnswer): ProviderRejectedError {
  const shape = errorShapeOf(answer.body, answer.nonJson);
  const body = answer.body as Record<string, unknown> | null;
  const providerCode =
    shape === 'error_message' ? (body?.error as number) : shape === 'code_success_message' ? (body?.code as string) : undefined;
  return new ProviderRejectedError(shape, {
    providerStatus: status,
    providerMessage: shape === 'non_json' ? undefined : messageOf(body),
    providerCode,
    body: shape === 'non_json' ? undefined : body,
  });
}

function throwRateLimited(answer: RawProviderAnswer): never {
  const error = new ProviderRateLimitedError('The payment provider is rate limiting the service; retry later.', {
    providerStatus: 429,
    providerMessage: messageOf(answer.body),
  });
  const seconds = Number(answer.retryAfter);
  error.headers['retry-after'] = Number.isFinite(seconds) && seconds > 0 ? String(Math.ceil(seconds)) : '60';
  throw error;
}
