/**
 * createClient({ baseUrl, getToken }): one method per operationId of openapi.json (the table and
 * the signatures are generated into src/openapi/operations.ts), sent with openapi-fetch, plus
 * watchOrder. A call resolves with the answer's body or rejects with a ProblemError.
 */
import createFetchClient from 'openapi-fetch';
import type { paths } from './openapi/merchant-api.js';
import { OPERATIONS, type OperationMethods } from './openapi/operations.js';
import type { BaseCallOptions, OperationSpec } from './operation-types.js';
import { networkProblem, problemOf, ProblemError } from './problem.js';
import { abortReason, DEFAULT_RETRY, retryDelayMs, sleep, type RetryOptions } from './retry.js';
import { watchOrder, type OrderStatusEvent, type WatchOrderOptions } from './watch-order.js';

export interface ClientOptions {
  /** Where the service answers, e.g. https://payments.example.com. */
  baseUrl: string;
  /**
   * The bearer token of the signed-in user, asked for before every request (so a refreshed token
   * is used at once); null or undefined sends none (health routes).
   */
  getToken: () => string | null | undefined | Promise<string | null | undefined>;
  /** A fetch of your own (React Native polyfills, tests); globalThis.fetch by default. */
  fetch?: typeof fetch;
  /** Retries of the calls that may be retried (src/retry.ts). */
  retry?: RetryOptions;
  /** Makes an Idempotency-Key; crypto.randomUUID by default (React Native: give one, e.g. expo-crypto's randomUUID). */
  newIdempotencyKey?: () => string;
}

export interface MerchantClient extends OperationMethods {
  /** The order's status events, live, until a final status (SUCCEEDED or FAILED). */
  watchOrder(orderId: string, options?: WatchOrderOptions): AsyncGenerator<OrderStatusEvent, void, undefined>;
}

interface CallRequest {
  pathParams: Record<string, string>;
  body: unknown;
  options: BaseCallOptions & { query?: unknown; idempotencyKey?: string };
}

export function createClient(options: ClientOptions): MerchantClient {
  const baseUrl = withoutTrailingSlashes(options.baseUrl);
  // Called, never stored as a method: a browser's fetch must not be invoked on another `this`.
  const doFetch: typeof fetch = (input, init) => (options.fetch ?? globalThis.fetch)(input, init);
  const fetchClient = createFetchClient<paths>({ baseUrl, fetch: (request: Request) => doFetch(request) });
  const policy = { ...DEFAULT_RETRY, ...options.retry };
  const newKey = options.newIdempotencyKey ?? (() => crypto.randomUUID());
  const bearer = async (): Promise<Record<string, string>> => {
    const token = await options.getToken();
    return token ? { authorization: `Bearer ${token}` } : {};
  };

  async function call(operation: OperationSpec, { pathParams, body, options: callOptions }: CallRequest): Promise<unknown> {
    const { signal, headers, query } = callOptions;
    // One key for every attempt: that is what makes a retry safe.
    const idempotencyKey = operation.idempotent ? (callOptions.idempotencyKey ?? newKey()) : undefined;
    const retryable = operation.idempotent || operation.method === 'GET';
    for (let attempt = 1; ; attempt++) {
      // Outside the try: a getToken that fails is the app's error, never retried as a network one.
      const authorization = await bearer();
      let failure: ProblemError;
      try {
        const { data, error, response } = await fetchClient.request(
          operation.method.toLowerCase() as 'get',
          operation.path as '/v1/orders',
          {
            params: { path: pathParams, query, header: idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : undefined } as never,
            body: body as never,
            headers: { ...headers, ...authorization },
            parseAs: operation.parseAs,
            signal,
          },
        );
        if (response.ok) return data;
        failure = problemOf(response, error);
      } catch (error) {
        if (signal?.aborted) throw abortReason(signal);
        if (error instanceof ProblemError) throw error;
        failure = networkProblem(error);
      }
      const delay = retryable ? retryDelayMs(failure, attempt, policy) : undefined;
      if (delay === undefined) throw failure;
      await sleep(delay, signal);
    }
  }

  const methods: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const [id, operation] of Object.entries<OperationSpec>(OPERATIONS)) {
    methods[id] = (...args: unknown[]) => {
      const pathParams: Record<string, string> = {};
      operation.pathParams.forEach((name, index) => (pathParams[name] = String(args[index])));
      let next = operation.pathParams.length;
      const body = operation.body === 'none' ? undefined : args[next++];
      return call(operation, { pathParams, body, options: args[next] ?? {} });
    };
  }
  const client = methods as unknown as OperationMethods;
  const currentStatus = async (orderId: string, signal?: AbortSignal) => (await client.getOrder(orderId, { signal })).status;
  return {
    ...client,
    watchOrder: (orderId, watchOptions) => watchOrder({ baseUrl, fetch: doFetch, bearer, currentStatus }, orderId, watchOptions),
  };
}

function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === '/') end--;
  return url.slice(0, end);
}
