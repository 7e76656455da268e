import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** A raw SSE client on its own connection (no keep-alive agent), as a browser tab would hold one. */
export interface SseClient {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  ended: boolean;
  close(): void;
}

/** Opens GET /v1/orders/{orderId}/events; resolves once the answer's head has arrived. */
export function openSseClient(port: number, token: string, orderId: string): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: `/v1/orders/${orderId}/events`,
        agent: false,
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      },
      (res) => {
        res.setEncoding('utf8');
        const client: SseClient = { status: res.statusCode ?? 0, headers: res.headers, body: '', ended: false, close: () => req.destroy() };
        res.on('data', (chunk: string) => (client.body += chunk));
        res.on('close', () => (client.ended = true));
        resolve(client);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
