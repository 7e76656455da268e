/**
 * The cold-start client of `npm run bench`: what a frontend sends, reads and pay-ins mixed (one
 * pay-in with a fresh Idempotency-Key, then three reads of the user's orders, per worker, in turn),
 * `concurrency` at a time over node:http, each request's latency kept (from the request's start to
 * the end of its answer, in ms). Light on purpose: autocannon measures throughput; this measures
 * the first requests one by one, and must itself stay warm (keepWarm) while the service idles.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const PAY_IN_EVERY = 4;

function send(url, { method, path, headers, body, agent }) {
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}${path}`, { method, headers, agent }, (response) => {
      response.on('data', () => undefined);
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * `requests` requests to `url`, `concurrency` at a time on `agent`'s sockets. Answers
 * `{ latencies, failed, reads, payIns }` (latencies in ms, in the order they were sent).
 */
export async function runMix({ url, token, orderIds, payInBody, requests, concurrency, agent, pathPrefix = '' }) {
  const latencies = new Array(requests);
  let next = 0;
  let failed = 0;
  let payIns = 0;
  const worker = async () => {
    for (let index = next++; index < requests; index = next++) {
      const payIn = index % PAY_IN_EVERY === 0;
      if (payIn) payIns += 1;
      const options = payIn
        ? {
            method: 'POST',
            path: `${pathPrefix}/v1/orders`,
            headers: {
              authorization: `Bearer ${token}`,
              'content-type': 'application/json',
              'idempotency-key': randomUUID(),
            },
            body: payInBody,
          }
        : {
            method: 'GET',
            path: `/v1/orders/${orderIds[Math.floor(Math.random() * orderIds.length)]}`,
            headers: { authorization: `Bearer ${token}` },
          };
      const started = performance.now();
      try {
        const status = await send(url, { ...options, agent });
        if (status >= 300) failed += 1;
      } catch {
        failed += 1;
      }
      latencies[index] = performance.now() - started;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latencies, failed, reads: requests - payIns, payIns };
}

/**
 * Keeps this client's own code warm while the service idles: the same mix to another server (the
 * bare one), a few requests a second, until `signal` aborts. Its own first requests after an idle
 * minute would otherwise be slow too, and counted against the service.
 */
export async function keepWarm(options, signal) {
  while (!signal.aborted) {
    await runMix({ ...options, requests: PAY_IN_EVERY, concurrency: 1 });
    await sleep(100);
  }
}

/** The nearest-rank percentile (p in 0..1): the value at rank ⌈p·n⌉ of the sorted latencies. */
export function percentile(latencies, p) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
}
