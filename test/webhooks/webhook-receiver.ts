import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHit {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When the request arrived (ms, Date.now()). */
  at: number;
}

/** How the receiver answers one path: given the how-manieth hit on that path (0 first) and the response. */
export type Behaviour = (hit: number, res: ServerResponse, received: ReceivedHit) => void;

/**
 * A local webhook endpoint for the tests and the bench: every request is recorded, then answered
 * by the behaviour of its path (200 when none is set). Tracks how many requests each `webhook-id`
 * has in progress at once.
 */
export class WebhookReceiver {
  readonly hits: ReceivedHit[] = [];
  readonly behaviours = new Map<string, Behaviour>();
  private readonly counts = new Map<string, number>();
  private readonly open = new Map<string, number>();
  /** The most requests of one webhook-id seen in progress at the same moment. */
  maxConcurrentPerId = 0;
  private server?: Server;
  base = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = (req.url ?? '/').split('?')[0];
        const received: ReceivedHit = { path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        this.hits.push(received);
        const id = String(req.headers['webhook-id']);
        const now = (this.open.get(id) ?? 0) + 1;
        this.open.set(id, now);
        this.maxConcurrentPerId = Math.max(this.maxConcurrentPerId, now);
        res.on('close', () => this.open.set(id, (this.open.get(id) ?? 1) - 1));
        const n = this.counts.get(path) ?? 0;
        this.counts.set(path, n + 1);
        const behaviour = this.behaviours.get(path);
        if (behaviour) behaviour(n, res, received);
        else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((done) => this.server!.listen(0, '127.0.0.1', done));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  on(path: string, behaviour: Behaviour): string {
    this.behaviours.set(path, behaviour);
    return `${this.base}${path}`;
  }

  hitsOn(path: string): ReceivedHit[] {
    return this.hits.filter((h) => h.path === path);
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((done) => this.server!.close(done));
  }
}
