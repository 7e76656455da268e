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

/**
 * The service's headers for the URL it is reached at (`PUBLIC_BASE_URL`). The CSP lets the Swagger
 * UI run (its inline init script and styles). Browsers are asked to move to https
 * (`upgrade-insecure-requests`, `Strict-Transport-Security`) only when the service is an https
 * one: over plain HTTP, `upgrade-insecure-requests` makes a browser fetch the page's own scripts
 * over https, which nothing answers, and `/docs` stays white. HSTS over plain HTTP is ignored by
 * browsers anyway (RFC 6797, 8.1), but from an https proxy in front of an http deployment it would
 * pin the host name to https for a year.
 */
export function serviceSecurityHeaders(
  publicBaseUrl: string,
  extraConnectSources: readonly string[] = [],
): Readonly<Record<string, string>> {
  const https = /^https:\/\//i.test(publicBaseUrl);
  return securityHeadersFor({
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'", "'unsafe-inline'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        // Where the Swagger UI may send requests besides this service (an identity provider's token endpoint).
        connectSrc: ["'self'", ...extraConnectSources],
        frameAncestors: ["'none'"],
        // helmet's defaults include it; null leaves it out.
        upgradeInsecureRequests: https ? [] : null,
      },
    },
    strictTransportSecurity: https ? undefined : false,
    crossOriginEmbedderPolicy: false,
  });
}
