import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ProviderWire, WIRE_CODES } from './provider-wire';

/**
 * What the wire does that the transport's wire tests (test/provider/provider-transport-wire.e2e-spec.ts)
 * do not reach: the bounds and refusals before anything is written, and the deadline on the head.
 */
describe('ProviderWire', () => {
  let server: Server;
  let base: string;
  let received: string[];
  /** What the raw TCP provider does with a connection. */
  let behave: (socket: import('node:net').Socket) => void;

  beforeAll(async () => {
    server = createServer((socket) => {
      socket.on('data', (chunk: Buffer) => received.push(chunk.toString('latin1')));
      behave(socket);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => (received = []));
  afterAll(async () => {
    await new Promise((done) => server.close(done));
  });

  it('refuses a body past 1 MiB before connecting: nothing reaches the provider', async () => {
    behave = (socket) => socket.destroy();
    const wire = new ProviderWire(1_000);
    const body = JSON.stringify({ text: 'x'.repeat(1024 * 1024) });
    await expect(wire.exchange(`${base}/api/agent/bills/v3`, 'POST', {}, body)).rejects.toMatchObject({ code: WIRE_CODES.requestTooLarge });
    wire.destroy();
    await new Promise((done) => setTimeout(done, 50));
    expect(received).toEqual([]);
  });

  it('refuses a header value with a control character before sending (node:http would not write it)', async () => {
    behave = (socket) => socket.destroy();
    const wire = new ProviderWire(1_000);
    await expect(wire.exchange(`${base}/x`, 'GET', { 'x-api-key': 'key\r\nx-injected: 1' })).rejects.toMatchObject({
      code: 'ERR_INVALID_CHAR',
    });
    wire.destroy();
    expect(received).toEqual([]);
  });

  it('counts the timeout from the start of the request until the head arrives: a head trickled byte by byte does not push it back', async () => {
    const head = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}';
    behave = (socket) => {
      let sent = 0;
      const trickle = setInterval(() => {
        if (socket.destroyed || sent >= head.length) return clearInterval(trickle);
        socket.write(head[sent++]);
      }, 40);
      socket.on('close', () => clearInterval(trickle));
    };
    const wire = new ProviderWire(400);
    const started = Date.now();
    await expect(wire.exchange(`${base}/slow-head`, 'GET', {})).rejects.toMatchObject({ code: WIRE_CODES.timeout });
    const elapsed = Date.now() - started;
    wire.destroy();
    // Each byte came within the 400 ms of silence allowed; the head as a whole did not.
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(head.length * 40);
  });

  it('reads an answer whole, its UTF-8 decoded once complete, and keeps the connection for the next exchange', async () => {
    let connections = 0;
    behave = (socket) => {
      connections += 1;
      socket.on('data', () => {
        const body = Buffer.from('{"message":"reçu ✓"}', 'utf8');
        socket.write(`HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`);
        // Split inside the "✓" (3 bytes in UTF-8).
        socket.write(body.subarray(0, body.length - 3));
        setTimeout(() => socket.write(body.subarray(body.length - 3)), 20);
      });
    };
    const wire = new ProviderWire(1_000);
    const first = await wire.exchange(`${base}/a`, 'POST', { 'content-type': 'application/json' }, '{}');
    const second = await wire.exchange(`${base}/b`, 'POST', { 'content-type': 'application/json' }, '{}');
    wire.destroy();
    expect([first.status, first.text, second.text]).toEqual([201, '{"message":"reçu ✓"}', '{"message":"reçu ✓"}']);
    expect(connections).toBe(1);
  });
});
