import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { RESPONSE_KEPT_BYTES, RESPONSE_READ_BYTES, WebhookSender, type WebhookAttemptResult } from '../../src/webhooks/webhook-sender';
import { settledHeap } from '../support/settled-heap';

const OPEN = { allowInsecureUrls: true, allowPrivateUrls: true };
const TIMEOUT_MS = 20_000;
/** What the receiver offers: 50 MB, far past what an attempt reads (RESPONSE_READ_BYTES) or keeps (RESPONSE_KEPT_BYTES). */
const OFFERED = 50 * 1024 * 1024;

/**
 * What webhook receivers answer is bounded while it streams: of an answer of 50 MB (chunked with no
 * length, or announced by Content-Length), the attempt keeps the first 1 KiB, stops reading past
 * RESPONSE_READ_BYTES and drops the connection; memory does not follow what the receiver offers, and
 * the receiver cannot even hand most of it over.
 */
describe('a webhook receiver answering without end', () => {
  let server: Server;
  let base: string;
  let written: number;
  let receiverSawClose: Promise<void>;
  let head: string;

  beforeAll(async () => {
    server = createServer((socket: Socket) => {
      let request = '';
      socket.on('error', () => undefined);
      receiverSawClose = new Promise((done) => socket.once('close', () => done()));
      socket.on('data', (data: Buffer) => {
        request += data.toString('latin1');
        if (!request.includes('\r\n\r\n') || written > 0) return;
        // The body is not awaited: the answer starts as soon as the request head is in.
        socket.write(head);
        const chunked = head.includes('chunked');
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        const framed = chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
        const pump = () => {
          while (!socket.destroyed && written < OFFERED) {
            written += chunk.length;
            if (!socket.write(framed)) return void socket.once('drain', pump);
          }
        };
        pump();
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => (written = 0));
  afterAll(async () => {
    await new Promise((done) => server.close(done));
  });

  /** The heap and the buffers outside it. */
  const inUse = () => {
    const usage = process.memoryUsage();
    return usage.heapUsed + usage.arrayBuffers + usage.external;
  };

  it.each([
    [
      'chunked, no length announced',
      'HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n',
      500,
    ],
    ['a Content-Length of 50 MB', `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${OFFERED}\r\n\r\n`, 200],
  ])('%s: the first 1 KiB is kept, the connection dropped past the bound, memory flat', async (_, answerHead, status) => {
    head = answerHead;
    const sender = new WebhookSender(OPEN, TIMEOUT_MS);
    settledHeap();
    const start = inUse();
    let peak = start;
    const sampler = setInterval(() => (peak = Math.max(peak, inUse())), 2);
    let result: WebhookAttemptResult;
    try {
      result = await sender.send({ url: `${base}/hook`, eventId: 'evt_1', body: '{}', signatureHeader: () => 'v1,x' });
      await receiverSawClose;
    } finally {
      clearInterval(sampler);
      sender.close();
    }
    expect(result).toMatchObject({ httpStatus: status, delivered: status === 200, responseBody: 'a'.repeat(RESPONSE_KEPT_BYTES) });
    // Ended by the bound, not by the timeout.
    expect(result.durationMs).toBeLessThan(TIMEOUT_MS / 4);
    // What was read (64 KiB), the chunks in flight in the socket's buffers, noise: far less than the offer.
    expect(Math.max(peak, inUse()) - start).toBeLessThan(OFFERED / 4);
    expect(written).toBeLessThan(OFFERED / 4);
    expect(RESPONSE_READ_BYTES).toBeLessThan(OFFERED / 100);
  });
});
