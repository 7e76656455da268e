import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseRetryAfter, RESPONSE_KEPT_BYTES, WebhookSender } from './webhook-sender';

const OPEN = { allowInsecureUrls: true, allowPrivateUrls: true };
const attempt = (url: string) => ({ url, eventId: 'evt_1', body: '{"a":1}', signatureHeader: (t: number) => `v1,sig-${t}` });

describe('WebhookSender', () => {
  let server: Server;
  let base: string;
  let answer: (res: import('node:http').ServerResponse) => void;
  let seen: { headers: import('node:http').IncomingHttpHeaders; body: string }[];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ headers: req.headers, body });
        answer(res);
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => (seen = []));
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  });

  it('posts the body with the Standard Webhooks headers; a 2xx delivers', async () => {
    answer = (res) => res.writeHead(202).end('thanks');
    const sender = new WebhookSender(OPEN, 1_000);
    const result = await sender.send(attempt(`${base}/hook`), () => new Date(1_700_000_000_500));
    sender.close();
    expect(result).toMatchObject({ delivered: true, httpStatus: 202, responseBody: 'thanks', gone: false });
    expect(seen[0].body).toBe('{"a":1}');
    expect(seen[0].headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': 'evt_1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': 'v1,sig-1700000000',
    });
  });

  it('keeps the first 1 KiB of a long answer and stops reading it past the bound', async () => {
    answer = (res) => res.writeHead(500).end('x'.repeat(1024 * 1024));
    const sender = new WebhookSender(OPEN, 2_000);
    const result = await sender.send(attempt(`${base}/hook`));
    sender.close();
    expect(result).toMatchObject({ delivered: false, httpStatus: 500, error: 'HTTP 500' });
    expect(result.responseBody).toHaveLength(RESPONSE_KEPT_BYTES);
  });

  it('does not follow a redirect, reads Retry-After of a 429, flags a 410', async () => {
    const sender = new WebhookSender(OPEN, 1_000);
    answer = (res) => res.writeHead(307, { location: '/elsewhere' }).end();
    expect(await sender.send(attempt(`${base}/hook`))).toMatchObject({
      delivered: false,
      httpStatus: 307,
      error: 'redirect (307) not followed',
    });
    answer = (res) => res.writeHead(429, { 'retry-after': '120' }).end();
    expect(await sender.send(attempt(`${base}/hook`))).toMatchObject({ httpStatus: 429, retryAfterSeconds: 120 });
    answer = (res) => res.writeHead(410).end();
    expect(await sender.send(attempt(`${base}/hook`))).toMatchObject({ httpStatus: 410, gone: true });
    expect(seen).toHaveLength(3);
    sender.close();
  });

  it('times out an answer that does not come', async () => {
    answer = () => undefined;
    const sender = new WebhookSender(OPEN, 200);
    const result = await sender.send(attempt(`${base}/hook`));
    sender.close();
    expect(result.delivered).toBe(false);
    expect(result.error).toMatch(/^timeout: /);
    expect(result.durationMs).toBeGreaterThanOrEqual(190);
  });

  it('refuses, without connecting, a URL the policy refuses and a name that resolves to a private address', async () => {
    answer = (res) => res.writeHead(200).end();
    const strict = new WebhookSender({ allowInsecureUrls: true, allowPrivateUrls: false }, 1_000);
    expect((await strict.send(attempt(`${base}/hook`))).error).toMatch(/^URL refused: .*loopback/);
    const port = new URL(base).port;
    expect((await strict.send(attempt(`http://localhost:${port}/hook`))).error).toMatch(/^URL refused: localhost resolves to a loopback/);
    const httpsOnly = new WebhookSender({ allowInsecureUrls: false, allowPrivateUrls: true }, 1_000);
    expect((await httpsOnly.send(attempt(`${base}/hook`))).error).toBe('URL refused: only https:// URLs');
    expect(seen).toHaveLength(0);
    strict.close();
    httpsOnly.close();
  });
});

describe('parseRetryAfter', () => {
  const now = new Date('2026-11-26T12:00:00Z');
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('30', now)).toBe(30);
    expect(parseRetryAfter('Thu, 26 Nov 2026 12:01:00 GMT', now)).toBe(60);
    expect(parseRetryAfter('Thu, 26 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
