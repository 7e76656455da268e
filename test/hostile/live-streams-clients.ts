/**
 * Child process of live-streams.e2e-spec.ts (and test/perf/live-streams-memory.perf-spec.ts): holds many raw SSE clients, each on its own
 * connection (no keep-alive agent), so that the test process's heap is the service's alone.
 * Speaks with the parent over IPC: one request, one answer.
 */
import { openSseClient, type SseClient as Client } from './live-streams-sse-client';

export type ClientsRequest =
  | { cmd: 'open'; port: number; orderId: string; tokens: string[]; concurrency: number }
  | { cmd: 'waitAll'; until: 'snapshot' | 'ended'; timeoutMs: number }
  | { cmd: 'report' }
  | { cmd: 'closeAll' };

export interface ClientReport {
  status: number;
  ended: boolean;
  statuses: string[];
  keepAlives: number;
}

const clients: Client[] = [];

function report(client: Client): ClientReport {
  const statuses = [...client.body.matchAll(/^data: (.*)$/gm)].map((m) => (JSON.parse(m[1]) as { status: string }).status);
  return { status: client.status, ended: client.ended, statuses, keepAlives: client.body.split(': keep-alive\n\n').length - 1 };
}

const reached: Record<'snapshot' | 'ended', (c: Client) => boolean> = {
  snapshot: (c) => c.body.includes('event: status'),
  ended: (c) => c.ended,
};

async function handle(message: ClientsRequest): Promise<unknown> {
  switch (message.cmd) {
    case 'open': {
      let next = 0;
      const opened: Client[] = new Array(message.tokens.length);
      await Promise.all(
        Array.from({ length: message.concurrency }, async () => {
          while (next < message.tokens.length) {
            const index = next++;
            opened[index] = await openSseClient(message.port, message.tokens[index], message.orderId);
          }
        }),
      );
      clients.push(...opened);
      return opened.map((c) => c.status);
    }
    case 'waitAll': {
      const deadline = Date.now() + message.timeoutMs;
      while (!clients.every(reached[message.until])) {
        if (Date.now() > deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return true;
    }
    case 'report':
      return clients.map(report);
    case 'closeAll':
      for (const client of clients) client.close();
      return true;
  }
}

process.on('message', (message: ClientsRequest) => {
  handle(message).then(
    (answer) => process.send?.({ ok: true, answer }),
    (error: unknown) => process.send?.({ ok: false, error: String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
