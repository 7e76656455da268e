import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { flattenSentHead } from './server-sent-events';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function settledHeap(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** About as many headers as a stream sends (security headers, CORS, request id, the stream's own). */
const HEADERS = Object.fromEntries(Array.from({ length: 18 }, (_, i) => [`x-header-${i}`, `value of header number ${i}`]));
const HEADS = 2_000;

/** The header block a response keeps once it has sent `writeHead`'s headers. */
function sentHead(flatten: boolean): string {
  const response = new ServerResponse(new IncomingMessage(new Socket()));
  response.writeHead(200, { ...HEADERS, 'x-request-id': randomUUID() });
  if (flatten) flattenSentHead(response);
  return (response as unknown as { _header: string })._header;
}

/** Heap held per kept header block (the responses themselves are let go). */
function heapPerHead(flatten: boolean): { bytes: number; length: number } {
  const before = settledHeap();
  const heads = Array.from({ length: HEADS }, () => sentHead(flatten));
  const bytes = (settledHeap() - before) / HEADS;
  return { bytes, length: heads[HEADS - 1].length };
}

describe('flattenSentHead', () => {
  it('leaves the header block unchanged and answers its first character', async () => {
    const server = createServer((_request, response) => {
      response.writeHead(200, HEADERS);
      const head = (response as unknown as { _header: string })._header;
      const copy = `${head}`;
      expect(flattenSentHead(response)).toBe('H'.charCodeAt(0));
      expect((response as unknown as { _header: string })._header).toBe(copy);
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/`);
    expect(response.headers.get('x-header-3')).toBe('value of header number 3');
    await response.arrayBuffer();
    await new Promise((resolve) => server.close(resolve));
    expect(flattenSentHead({})).toBe(-1);
  });

  it('makes a response keep its sent head as one string, not the pieces Node concatenated it from', () => {
    heapPerHead(false); // Warm-up: code compiled.
    heapPerHead(true);
    const asBuilt = heapPerHead(false);
    const flattened = heapPerHead(true);
    // One byte a character plus the string's header, against a cons cell per piece (about 3 KB here).
    expect(flattened.bytes).toBeLessThan(flattened.length + 200);
    expect(asBuilt.bytes).toBeGreaterThan(2 * flattened.bytes);
  });
});
