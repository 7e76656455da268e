/**
 * `npm run example:checkout`: serves the checkout page on EXAMPLE_PORT (default 5173) against the
 * payments API at API_BASE_URL (default http://localhost:3000), which must list this page's origin
 * in its CORS_ORIGINS. checkout.ts is bundled with esbuild from the client's source at start.
 *
 * The page gets its bearer token from this server (POST /session/token), as a real merchant's page
 * gets it from the merchant's own backend after the shopper signs in. EXAMPLE-ONLY SHORTCUT: this
 * server signs the token itself with the service's HS256 secret (AUTH_JWT_SECRET, or the development
 * default of `npm start`, as `npm run token` does) for a shopper id kept in a cookie. A real backend
 * never holds that secret: tokens come from the merchant's identity provider.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { mintToken } from '../../src/auth/token-minter';
import { loadAppConfig, loadDotEnvIfPresent } from '../../src/config/app-config';

const HERE = __dirname;
/** Short-lived: the page asks again before it runs out. */
const TOKEN_TTL_SECONDS = 15 * 60;
const SHOPPER_COOKIE = 'checkout_shopper';

export interface CheckoutServerOptions {
  apiBaseUrl: string;
  /** The HS256 secret the service verifies bearer tokens with. */
  jwtSecret: string;
  issuer?: string;
  audience?: string;
  port?: number;
  host?: string;
}

export interface CheckoutServer {
  url: string;
  close(): Promise<void>;
}

/** The page's script: checkout.ts and the client's source, one ES module for browsers. */
export async function bundleCheckoutScript(): Promise<string> {
  const result = await build({
    entryPoints: [resolve(HERE, 'checkout.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    write: false,
    minify: false,
    sourcemap: 'inline',
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

function shopperOf(request: IncomingMessage): string | undefined {
  const cookie = request.headers.cookie ?? '';
  return new RegExp(`(?:^|;\\s*)${SHOPPER_COOKIE}=([\\w-]{1,64})`).exec(cookie)?.[1];
}

export async function startCheckoutServer(options: CheckoutServerOptions): Promise<CheckoutServer> {
  const script = await bundleCheckoutScript();
  const html = readFileSync(resolve(HERE, 'index.html'), 'utf8').replace('__API_BASE_URL__', escapeAttribute(options.apiBaseUrl));
  const security = {
    'x-content-type-options': 'nosniff',
    // The page may call its own backend and the payments API, nothing else.
    'content-security-policy': `default-src 'self'; connect-src 'self' ${new URL(options.apiBaseUrl).origin}; style-src 'self' 'unsafe-inline'`,
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://page').pathname;
    if (request.method === 'GET' && (path === '/' || path === '/index.html')) {
      // The shopper's session: in a real shop, whoever signed in; here, one random id per browser.
      const shopper = shopperOf(request) ?? `shopper_${randomUUID().slice(0, 12)}`;
      response.writeHead(200, {
        ...security,
        'content-type': 'text/html; charset=utf-8',
        'set-cookie': `${SHOPPER_COOKIE}=${shopper}; Path=/; HttpOnly; SameSite=Strict`,
      });
      return response.end(html);
    }
    if (request.method === 'GET' && path === '/checkout.js') {
      response.writeHead(200, { ...security, 'content-type': 'text/javascript; charset=utf-8' });
      return response.end(script);
    }
    if (request.method === 'POST' && path === '/session/token') {
      const shopper = shopperOf(request);
      if (!shopper) {
        response.writeHead(401, { 'content-type': 'application/json' });
        return response.end(JSON.stringify({ error: 'load the page first: it starts the session' }));
      }
      const token = await mintToken({
        sub: shopper,
        roles: ['customer'],
        ttl: TOKEN_TTL_SECONDS,
        secret: options.jwtSecret,
        issuer: options.issuer,
        audience: options.audience,
      });
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      return response.end(JSON.stringify({ token, expiresInSeconds: TOKEN_TTL_SECONDS }));
    }
    if (path === '/favicon.ico') {
      response.writeHead(204);
      return response.end();
    }
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('not found');
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(error instanceof Error ? error.message : 'error');
    });
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => done());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  return {
    url: `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : host}:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((done) => server.close(() => done()));
    },
  };
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/** Says whether the API lets this page's origin in (CORS_ORIGINS), since the browser would only say "Failed to fetch". */
async function checkCors(apiBaseUrl: string, pageOrigin: string): Promise<string | undefined> {
  try {
    const preflight = await fetch(`${apiBaseUrl}/v1/orders`, {
      method: 'OPTIONS',
      headers: { origin: pageOrigin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });
    if (preflight.headers.get('access-control-allow-origin') === pageOrigin) return undefined;
    return `${apiBaseUrl} does not allow ${pageOrigin}: start it with CORS_ORIGINS=${pageOrigin}`;
  } catch {
    return `${apiBaseUrl} does not answer: start the service (CORS_ORIGINS=${pageOrigin} npm start) or set API_BASE_URL`;
  }
}

async function main(): Promise<void> {
  loadDotEnvIfPresent();
  const { auth } = loadAppConfig(process.env);
  if (!auth.jwtSecret)
    throw new Error('the service verifies tokens with AUTH_JWKS_URL or AUTH_OIDC_ISSUER: this example can only sign HS256 tokens');
  const apiBaseUrl = (process.env.API_BASE_URL ?? 'http://localhost:3000').replace(/\/$/, '');
  const port = Number(process.env.EXAMPLE_PORT ?? 5173);
  const host = process.env.EXAMPLE_HOST ?? 'localhost';
  const page = await startCheckoutServer({
    apiBaseUrl,
    jwtSecret: auth.jwtSecret,
    issuer: auth.issuer,
    audience: auth.audience,
    port,
    host,
  });
  console.log(`checkout example: ${page.url} (payments API ${apiBaseUrl})`);
  const problem = await checkCors(apiBaseUrl, page.url);
  if (problem) console.warn(`warning: ${problem}`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(`example:checkout: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
}
