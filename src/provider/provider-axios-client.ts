import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Axios } from 'axios';

/**
 * The largest answer read from the provider, in bytes. Its answers are small JSON documents; the
 * largest, a card's transaction listing, is not documented, hence the room. An answer that goes past
 * it is not read to its end (the connection is closed) and is a ProviderBadResponseError.
 */
export const PROVIDER_ANSWER_MAX_BYTES = 4 * 1024 * 1024;
/** The largest request body sent (ours are small JSON documents): past it nothing is sent. */
const PROVIDER_REQUEST_MAX_BYTES = 1024 * 1024;

export interface ProviderClient {
  http: Axios;
  agents: { http: HttpAgent; https: HttpsAgent };
}

/**
 * The TCP keep-alive delay of the provider's sockets: axios sets 60 s on every socket it is given,
 * the agent its own `keepAliveMsecs` on every socket it takes back. The same value on both sides
 * leaves Node nothing to change (two to four setsockopt calls per exchange otherwise).
 */
const TCP_KEEPALIVE_DELAY_MS = 60_000;

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
export function providerClient(timeoutMs: number): ProviderClient {
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
