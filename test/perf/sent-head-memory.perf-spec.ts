import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { flattenSentHead } from '../../src/common/server-sent-events';
import { settledHeap } from '../support/settled-heap';

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

/**
 * What flattenSentHead (src/common/server-sent-events.ts) saves on every live stream: the header
 * block Node keeps after writeHead is a string concatenated from dozens of pieces; one character
 * read makes V8 flatten it into one string of its length. Heap bytes after forced collections: a
 * measurement, so in the perf tier (the behaviour is pinned by the unit spec next to the code).
 */
describe('the header block a live stream keeps', () => {
  it('is one string once flattened, not the pieces Node concatenated it from', () => {
    heapPerHead(false); // Warm-up: code compiled.
    heapPerHead(true);
    const asBuilt = heapPerHead(false);
    const flattened = heapPerHead(true);
    // One byte a character plus the string's header, against a cons cell per piece (about 3 KB here).
    expect(flattened.bytes).toBeLessThan(flattened.length + 200);
    expect(asBuilt.bytes).toBeGreaterThan(2 * flattened.bytes);
  });
});
