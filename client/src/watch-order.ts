/**
 * watchOrder: an order's live status (GET /v1/orders/{id}/events) as an async iterator. A browser's
 * EventSource cannot send the bearer token (no headers), so this reads the stream with fetch and
 * eventsource-parser. After a drop (the connection broke, the instance shut down, a 503) it
 * reconnects with Last-Event-ID, so the service sends only what was missed: each event once, in
 * order, until a final status, after which the iterator ends.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { components } from './openapi/merchant-api.js';
import { ProblemError, readProblem, retryAfterSeconds } from './problem.js';
import { abortReason, sleep } from './retry.js';

export type OrderStatus = components['schemas']['OrderStatusEventDto']['status'];

/** One `status` event: the order's data and the event's id (what Last-Event-ID resumes from). */
export type OrderStatusEvent = components['schemas']['OrderStatusEventDto'] & { eventId: string };

/** Statuses after which nothing changes: the service ends the stream. */
export const FINAL_STATUSES: readonly OrderStatus[] = ['SUCCEEDED', 'FAILED'];

export interface WatchOrderOptions {
  /** Stops watching: the iterator rejects with the abort reason. */
  signal?: AbortSignal;
  /** Resume after this event (an `eventId` seen before, e.g. kept across a page reload). */
  lastEventId?: string;
  /** The first reconnection delay until the service names one with `retry:` (default 1000 ms). */
  retryMs?: number;
  /** Longest wait between reconnections when they keep failing (default 30 s). */
  maxRetryMs?: number;
}

interface StreamContext {
  baseUrl: string;
  fetch: typeof fetch;
  bearer: () => Promise<Record<string, string>>;
  /** The order's status now (getOrder). */
  currentStatus: (orderId: string, signal?: AbortSignal) => Promise<OrderStatus>;
}

export async function* watchOrder(
  context: StreamContext,
  orderId: string,
  options: WatchOrderOptions = {},
): AsyncGenerator<OrderStatusEvent, void, undefined> {
  const { signal } = options;
  const maxRetryMs = options.maxRetryMs ?? 30_000;
  const url = `${context.baseUrl}/v1/orders/${encodeURIComponent(orderId)}/events`;
  let lastEventId = options.lastEventId;
  let retryMs = options.retryMs ?? 1000;
  // Reconnections in a row that brought nothing: each waits twice as long, up to maxRetryMs.
  let barren = 0;
  for (;;) {
    if (signal?.aborted) throw abortReason(signal);
    let waitMs: number | undefined;
    // Outside the try: a getToken that fails is the app's error, not a drop to reconnect after.
    const authorization = await context.bearer();
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', ...authorization };
      if (lastEventId) headers['last-event-id'] = lastEventId;
      const response = await context.fetch(url, { headers, signal });
      if (!response.ok || !response.body) {
        const problem = await readProblem(response);
        // Too many streams, or the instance is unavailable: wait as told, then try again. Anything else will not change.
        if (!(response.status === 429 || response.status === 502 || response.status === 503 || response.status === 504)) throw problem;
        const named = retryAfterSeconds(response.headers);
        waitMs = named === undefined ? undefined : named * 1000;
      } else {
        let told = false;
        let events = 0;
        const onRetry = (ms: number) => ((retryMs = ms), (told = true));
        for await (const event of statusEvents(response.body, onRetry)) {
          lastEventId = event.eventId;
          barren = 0;
          events++;
          yield event;
          if (FINAL_STATUSES.includes(event.status)) return;
        }
        // Ended with nothing and no `retry:`: the service ends a resumed stream at once when the
        // given event was the final one. A proxy closing the connection looks the same: ask the order.
        if (events === 0 && !told && FINAL_STATUSES.includes(await context.currentStatus(orderId, signal))) return;
      }
    } catch (error) {
      if (signal?.aborted) throw abortReason(signal);
      if (!isDrop(error)) throw error;
    }
    // The stream ended or broke before a final status: reconnect after `retry:` (backing off while nothing comes).
    await sleep(waitMs ?? Math.min(maxRetryMs, retryMs * 2 ** barren), signal);
    barren++;
  }
}

/** A network failure or a broken stream (fetch's TypeError, a reset), not a problem that will not change. */
function isDrop(error: unknown): boolean {
  if (!(error instanceof ProblemError)) return true;
  return error.code === 'network_error' || error.status === 503;
}

/** The `status` events of one response body; `onRetry` hears each `retry:` field. */
async function* statusEvents(body: ReadableStream<Uint8Array>, onRetry: (ms: number) => void): AsyncGenerator<OrderStatusEvent> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => pending.push(message), onRetry });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      while (pending.length) {
        const message = pending.shift()!;
        if (message.event !== 'status' || !message.id) continue;
        yield { ...(JSON.parse(message.data) as components['schemas']['OrderStatusEventDto']), eventId: message.id };
      }
    }
  } finally {
    // Leaving early (a final status, an abort, the caller's break) closes the connection.
    await reader.cancel().catch(() => undefined);
  }
}
