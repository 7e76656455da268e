import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { connect, Socket, type AddressInfo } from 'node:net';
import { flattenSentHead } from './server-sent-events';

/** About as many headers as a stream sends (security headers, CORS, request id, the stream's own). */
const HEADERS = Object.fromEntries(Array.from({ length: 18 }, (_, i) => [`x-header-${i}`, `value of header number ${i}`]));

/** Node's private field flattenSentHead reads: pinned below, so that a Node that renames it fails here. */
const sentHeadField = (response: object) => (response as { _header?: unknown })._header;

/** A server whose one response is written by `respond`; answers what the client read on the socket, raw. */
async function rawExchange(respond: (response: ServerResponse) => void): Promise<string> {
  const server = createServer((_request, response) => respond(response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.end('GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n'));
      let received = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (received += chunk));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe("Node's kept header block (what flattenSentHead relies on)", () => {
  it('a response keeps, after writeHead, the exact header block it sent, as a string, in `_header`', async () => {
    let kept: unknown;
    const received = await rawExchange((response) => {
      response.writeHead(200, HEADERS);
      kept = sentHeadField(response);
      response.end('body');
    });
    expect(typeof kept).toBe('string');
    expect(kept as string).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n$/);
    expect(received.startsWith(kept as string)).toBe(true);
    expect(received.slice((kept as string).length)).toContain('body');
  });

  it('a response keeps no header block before writeHead', () => {
    const response = new ServerResponse(new IncomingMessage(new Socket()));
    expect(typeof sentHeadField(response) === 'string' && (sentHeadField(response) as string).length > 0).toBe(false);
  });
});

describe('flattenSentHead', () => {
  it('leaves the header block unchanged and answers its first character', async () => {
    let before = '';
    let after: unknown;
    let answered = 0;
    const received = await rawExchange((response) => {
      response.writeHead(200, HEADERS);
      before = `${sentHeadField(response) as string}`;
      answered = flattenSentHead(response);
      after = sentHeadField(response);
      response.end();
    });
    expect(answered).toBe('H'.charCodeAt(0));
    expect(after).toBe(before);
    expect(received.startsWith(before)).toBe(true);
    expect(received).toContain('x-header-3: value of header number 3\r\n');
  });

  it('answers -1 when there is no header block: nothing sent yet, or not a response', () => {
    expect(flattenSentHead(new ServerResponse(new IncomingMessage(new Socket())))).toBe(-1);
    expect(flattenSentHead({})).toBe(-1);
    expect(flattenSentHead({ _header: '' })).toBe(-1);
    expect(flattenSentHead({ _header: 42 })).toBe(-1);
  });

  // What the flattening saves (heap per kept header block) is measured, not asserted here: V8's
  // heap figures depend on the collector, and a unit test must not. test/perf/sent-head-memory.perf-spec.ts.
});
