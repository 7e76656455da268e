import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * The headers helmet sets for `options`, computed once. `@fastify/helmet` runs `helmet(options)`
 * anew for every request: it parses the CSP directives again, builds a dozen middlewares and calls
 * `setHeader` once per header, which was about a tenth of the CPU of a page of orders. The headers
 * depend only on the options (no nonces here), so they are computed at start-up by the same helmet
 * and sent as one object (see registerSecurityHeaders).
 */
export function securityHeadersFor(options: HelmetOptions): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    // helmet removes X-Powered-By, which neither Fastify nor this service ever sets.
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  } as unknown as ServerResponse;
  // helmet 8 throws a bad option itself; its callback only ever says "next".
  helmet(options)({} as IncomingMessage, response, () => undefined);
  return Object.freeze(headers);
}
