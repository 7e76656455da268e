import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import { APP_LOGGER } from '../logging/logging.module';
import { redact, redactUrl, registerConfiguredSecrets } from '../logging/redaction';
import { currentRequestId } from '../logging/request-context';
import { MetricsService } from '../metrics/metrics.service';
import { endSpan, startClientSpan, traceContextHeaders, tracingEnabled } from '../tracing/tracing';
import { headerText, parseAnswer, type RawProviderAnswer } from './provider-answer';
import { interpretAnswer } from './provider-answer-interpretation';
import { ProviderWire } from './provider-wire';
import { ProviderCallLog } from './provider-call-log';
import type { ProviderHost, ProviderRequest, ProviderResponse } from './provider-request';
import { wireFailure } from './provider-wire-failure';
import type { ProviderError } from './provider.errors';

/**
 * The wire: one HTTP exchange with the provider, with its timeout, its log line, its call-log row
 * (both redacted) and the translation of every failure into a typed ProviderError. Knows nothing
 * of tokens or budgets (ProviderHttpClient adds those).
 *
 * It is also the provider boundary: what the provider said is scrubbed here, once, as it is
 * parsed, before any caller, error message, log line or stored row can see it: the fields the
 * clients read are kept by the endpoint's shape (provider-answer-shapes.ts), the secrets it
 * delivers registered first; every other text loses its digit runs but those of the request
 * (`scrubProviderBody`), and NULs (parseAnswer, provider-answer.ts).
 *
 * An exchange's steps: its span, the request sent on the host's wire (node:http, provider-wire.ts)
 * and its answer parsed, or the failure translated (wireFailure, provider-wire-failure.ts); then its
 * log line, call-log row and metrics (recordCall), and the span ended.
 */
@Injectable()
export class ProviderTransport implements OnApplicationShutdown {
  private readonly providerConfig: AppConfig['provider'];

  /** One wire per provider host, each with its own keep-alive agents (see ProviderWire). */
  private readonly wires: Record<ProviderHost, ProviderWire>;

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
    this.wires = { base: new ProviderWire(this.providerConfig.timeoutMs), link: new ProviderWire(this.providerConfig.timeoutMs) };
  }

  onApplicationShutdown() {
    for (const wire of Object.values(this.wires)) wire.destroy();
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
    const span = providerCallSpan(request, url);
    const started = performance.now();
    let answer: RawProviderAnswer | undefined;
    let failure: ProviderError | undefined;
    try {
      answer = await this.send(request, url, headers, span);
      return answer;
    } catch (error) {
      failure = wireFailure(error, request, this.providerConfig.timeoutMs);
      throw failure;
    } finally {
      this.recordCall(request, url, Math.round(performance.now() - started), answer, failure);
      if (span) endProviderCallSpan(span, answer, failure);
    }
  }

  /** One HTTP exchange on the host's wire; the answer read whole, parsed and scrubbed (parseAnswer). */
  private async send(
    request: ProviderRequest,
    url: string,
    headers: Record<string, string>,
    span: Span | undefined,
  ): Promise<RawProviderAnswer> {
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const answer = await this.wires[request.host].exchange(
      url,
      request.method,
      {
        accept: 'application/json',
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
        ...(span && traceContextHeaders(span)),
      },
      body,
    );
    return parseAnswer(request, answer.status, answer.text, headerText(answer.headers['retry-after']));
  }

  /**
   * Interprets a read answer: the data of a success, or the typed error of a refusal
   * (interpretAnswer, provider-answer-interpretation.ts).
   */
  interpret<T>(request: ProviderRequest, answer: RawProviderAnswer): ProviderResponse<T> {
    return interpretAnswer<T>(request, answer);
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

/** The call's span, when tracing is on: its endpoint's name and host, never the URL (paths and queries carry identifiers) nor a header (credentials). */
function providerCallSpan(request: ProviderRequest, url: string): Span | undefined {
  return tracingEnabled()
    ? startClientSpan(`provider ${request.endpoint}`, {
        'provider.endpoint': request.endpoint,
        'http.request.method': request.method,
        'server.address': new URL(url).hostname,
      })
    : undefined;
}

/** The status read, or the failure's code (a 5xx answer is an error of the span too). */
function endProviderCallSpan(span: Span, answer: RawProviderAnswer | undefined, failure: ProviderError | undefined): void {
  endSpan(
    span,
    answer ? { 'http.response.status_code': answer.status } : {},
    failure?.code ?? (answer && answer.status >= 500 ? String(answer.status) : undefined),
  );
}
