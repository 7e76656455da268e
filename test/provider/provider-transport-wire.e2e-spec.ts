import { createServer, type Server, type Socket } from 'node:net';
import {
  ProviderBadResponseError,
  ProviderConnectionLostError,
  ProviderError,
  ProviderTimeoutError,
} from '../../src/provider/provider.errors';
import { PROVIDER_ANSWER_MAX_BYTES } from '../../src/provider/provider-wire';
import type { ProviderRequest } from '../../src/provider/provider-request';
import { ProviderTransport } from '../../src/provider/provider-transport';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { settledHeap } from '../support/settled-heap';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** What the raw provider below writes on each connection once it has read a request head. */
type Script = (socket: Socket) => void;

/**
 * The wire as the transport meets it, below what the sandbox can fake: answers cut in the middle
 * of their body, answers that stall before or after their head, bodies split inside a UTF-8
 * character, redirects, answers larger than the transport reads, and the request head itself.
 */
describe('provider transport on the wire', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let rawProvider: Server;
  let script: Script = (socket) => socket.destroy();
  const sockets = new Set<Socket>();
  /** The request heads the raw provider read, oldest first (cleared by each test that reads it). */
  const heads: string[] = [];

  beforeAll(async () => {
    rawProvider = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      // A client that closes while an answer is being written: EPIPE / ECONNRESET here, expected.
      socket.on('error', () => undefined);
      let head = '';
      socket.on('data', (chunk) => {
        head += chunk.toString('latin1');
        if (head.includes('\r\n\r\n')) {
          heads.push(head.slice(0, head.indexOf('\r\n\r\n')));
          head = '';
          script(socket);
        }
      });
    });
    await new Promise<void>((resolve) => rawProvider.listen(0, '127.0.0.1', resolve));
    const { port } = rawProvider.address() as { port: number };
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, { PROVIDER_BASE_URL: `http://127.0.0.1:${port}`, PROVIDER_TIMEOUT_MS: '400' });
  });
  afterAll(async () => {
    await service.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => rawProvider.close(resolve));
    await sandbox.close();
  });

  const request: ProviderRequest = { area: 'payin', endpoint: 'payin.status', host: 'base', method: 'POST', path: '/wire', body: { a: 1 } };
  const exchange = () => service.get(ProviderTransport).exchange(request, {});

  async function failure(): Promise<ProviderError> {
    const error = await exchange().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }

  it('an answer cut in the middle of its body is a lost connection: outcome unknown', async () => {
    script = (socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"status":"SUCC');
      setTimeout(() => socket.destroy(), 20);
    };
    const error = await failure();
    expect(error).toBeInstanceOf(ProviderConnectionLostError);
    expect(error.outcomeKnown).toBe(false);
  });

  it('an answer that stalls after its head is a timeout after PROVIDER_TIMEOUT_MS of silence: outcome unknown', async () => {
    script = (socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"sta');
    const started = Date.now();
    const error = await failure();
    expect(error).toBeInstanceOf(ProviderTimeoutError);
    expect(error.outcomeKnown).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('reads a chunked answer whose UTF-8 characters are split between chunks, and its Retry-After', async () => {
    const body = Buffer.from(JSON.stringify({ message: 'Paiement reçu — merci ✓' }), 'utf8');
    const cut = body.indexOf(Buffer.from('ç')) + 1; // inside the two bytes of "ç"
    script = (socket) => {
      socket.write(
        'HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 7\r\nTransfer-Encoding: chunked\r\n\r\n',
      );
      for (const part of [body.subarray(0, cut), body.subarray(cut)])
        socket.write(`${part.length.toString(16)}\r\n${part.toString('latin1')}\r\n`, 'latin1');
      socket.write('0\r\n\r\n');
    };
    const answer = await exchange();
    expect(answer).toEqual({ status: 429, body: { message: 'Paiement reçu — merci ✓' }, nonJson: false, retryAfter: '7' });
  });

  it('a provider silent from the start is a timeout after PROVIDER_TIMEOUT_MS: outcome unknown', async () => {
    script = () => undefined;
    const started = Date.now();
    const error = await failure();
    expect(error).toBeInstanceOf(ProviderTimeoutError);
    expect(error.outcomeKnown).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('sends the request head node:http sent: no User-Agent, no Accept-Encoding, nothing of a proxy', async () => {
    heads.length = 0;
    script = (socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
    await service.get(ProviderTransport).exchange(request, { authorization: 'Bearer wire-token' });
    expect(heads).toHaveLength(1);
    const [requestLine, ...fields] = heads[0].split('\r\n');
    expect(requestLine).toBe('POST /wire HTTP/1.1');
    const sent = Object.fromEntries(
      fields.map((field) => [field.slice(0, field.indexOf(':')).toLowerCase(), field.slice(field.indexOf(':') + 1).trim()]),
    );
    expect(sent).toEqual({
      accept: 'application/json',
      'content-type': 'application/json',
      authorization: 'Bearer wire-token',
      'content-length': String(Buffer.byteLength(JSON.stringify(request.body))),
      host: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      connection: 'keep-alive',
    });
  });

  it('follows no redirect: a 3xx is the answer, and nothing else is asked for', async () => {
    heads.length = 0;
    script = (socket) => socket.write('HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n');
    const answer = await exchange();
    expect(answer).toEqual({ status: 302, body: null, nonJson: true, retryAfter: undefined });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(heads).toHaveLength(1);
    expect(heads[0]).toMatch(/^POST \/wire HTTP\/1\.1\r\n/);
  });

  it('stops reading an answer larger than PROVIDER_ANSWER_MAX_BYTES: a bad response, outcome unknown', async () => {
    const total = 8 * PROVIDER_ANSWER_MAX_BYTES;
    let written = 0;
    let providerSocketClosed!: Promise<void>;
    script = (socket) => {
      providerSocketClosed = new Promise((resolve) => socket.once('close', () => resolve()));
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (!socket.destroyed && written < total) {
          written += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
    };
    const error = await failure();
    expect(error).toBeInstanceOf(ProviderBadResponseError);
    expect(error.outcomeKnown).toBe(false);
    expect(error.providerStatus).toBe(200);
    // The transport closed the connection: the provider could not write the whole answer.
    await providerSocketClosed;
    expect(written).toBeLessThan(total);
  });

  it('an endless answer (chunked, no length announced) is cut while it streams: memory does not follow what was offered', async () => {
    const offered = 32 * PROVIDER_ANSWER_MAX_BYTES;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const framed = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    let written = 0;
    script = (socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
      const pump = () => {
        while (!socket.destroyed && written < offered) {
          written += chunk.length;
          if (!socket.write(framed)) return void socket.once('drain', pump);
        }
      };
      pump();
    };
    // The heap and the buffers outside it, sampled every 2 ms while the answer streams in.
    const inUse = () => {
      const usage = process.memoryUsage();
      return usage.heapUsed + usage.arrayBuffers + usage.external;
    };
    settledHeap();
    const start = inUse();
    let peak = start;
    const sampler = setInterval(() => (peak = Math.max(peak, inUse())), 2);
    let error: ProviderError;
    try {
      error = await failure();
    } finally {
      clearInterval(sampler);
    }
    expect(error).toBeInstanceOf(ProviderBadResponseError);
    expect(error.outcomeKnown).toBe(false);
    // The bound (4 MiB), the chunks read and not yet collected, noise: a quarter of what was offered at most.
    expect(Math.max(peak, inUse()) - start).toBeLessThan(offered / 4);
    expect(written).toBeLessThan(offered / 4);
  });
});
