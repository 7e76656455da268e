/** An answer cut off because it went past its bound: a failed download, never a partial document. */
export class DownloadTooLargeError extends Error {
  constructor(
    readonly url: string,
    readonly maxBytes: number,
  ) {
    super(`${url} answered more than ${maxBytes} bytes: the download was cut`);
    this.name = 'DownloadTooLargeError';
  }
}

/**
 * The body of `response`, read as it streams and never past `maxBytes`: a declared length over the
 * bound is refused before a byte is read, and a body that goes past it is cancelled (its connection
 * closed) at the chunk that crosses it. Memory holds at most the bound, whatever was offered
 * (`Response.text()` reads everything first; a size checked after it came too late).
 */
export async function readBoundedBody(response: Response, maxBytes: number, url: string): Promise<Buffer> {
  const body = response.body;
  if (!body) return Buffer.alloc(0);
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await body.cancel().catch(() => undefined);
    throw new DownloadTooLargeError(url, maxBytes);
  }
  const reader = body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const chunks: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new DownloadTooLargeError(url, maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** A fetch-compatible function whose request takes a URL string and a RequestInit. */
export type FetchFunction = (url: string, init: RequestInit) => Promise<Response>;

/**
 * fetch, with the answer read whole (readBoundedBody) before it resolves: for libraries that
 * fetch and read themselves (jose's remote key set), so that what they read is bounded too.
 */
export function boundedFetch(maxBytes: number, fetchImplementation: FetchFunction = fetch): FetchFunction {
  return async (url, init) => {
    const response = await fetchImplementation(url, init);
    const body = await readBoundedBody(response, maxBytes, url);
    // 204, 205 and 304 may carry no body (the Response constructor refuses one).
    const empty = [204, 205, 304].includes(response.status);
    return new Response(empty ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
