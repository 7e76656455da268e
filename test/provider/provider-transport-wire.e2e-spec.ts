import { createServer, type Server, type Socket } from 'node:net';
import { ProviderConnectionLostError, ProviderError, ProviderTimeoutError } from '../../src/provider/provider.errors';
import { ProviderTransport, type ProviderRequest } from '../../src/provider/provider-transport';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** What the raw provider below writes on each connection once it has read a request head. */
type Script = (socket: Socket) => void;

/**
 * The wire as the transport meets it, below what the sandbox can fake: answers cut in the middle
 * of their body, answers that stall after their head, bodies split inside a UTF-8 character.
 */
describe('provider transport on the wire', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let rawProvider: Server;
  let script: Script = (socket) => socket.destroy();
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    rawProvider = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      let head = '';
      socket.on('data', (chunk) => {
        head += chunk.toString('latin1');
        if (head.includes('\r\n\r\n')) {
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
});
