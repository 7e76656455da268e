/**
 * `npm run docs:openapi`: writes the OpenAPI document of the service to `openapi.json` at the
 * repository root (the committed copy; test/docs/openapi.e2e-spec.ts fails when it is stale).
 *
 * The document is the one the running service serves at `/docs-json`: the application is built
 * by `createApp` exactly as in production and the document is read through `app.inject`, nothing
 * listens. `createApp` initialises the application, which connects to a database, so this script
 * starts an in-memory embedded PostgreSQL (PGlite) and migrates it; the test uses the test database.
 *
 * Byte-stable: the configuration is fixed here (OPENAPI_ENV), never read from the environment or
 * `.env`, so the document carries no port, URL, date or setting of the machine that produced it.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadAppConfig } from '../src/config/app-config';
import { createApp } from '../src/create-app';
import { createLogger } from '../src/logging/logger';

/** Where the committed document lives. */
export const OPENAPI_PATH = resolve(__dirname, '..', 'openapi.json');

/**
 * The configuration the document is built with: development defaults, nothing from the machine.
 * The provider is never called while the document is built; its URL is a reserved, unresolvable name.
 */
export const OPENAPI_ENV: Readonly<Record<string, string>> = Object.freeze({
  NODE_ENV: 'development',
  PORT: '3000',
  PUBLIC_BASE_URL: 'http://localhost:3000',
  PROVIDER_BASE_URL: 'http://provider.invalid',
  CALLBACK_SIGNING_SECRET: 'openapi-document-callback-signing-secret-0123456789',
  LOG_LEVEL: 'silent',
});

/**
 * The OpenAPI document served at `/docs-json` by an application built by `createApp` on
 * `databaseUrl` (migrated): what finance staff and clients actually get, byte for byte.
 */
export async function fetchServedOpenApiDocument(databaseUrl: string): Promise<Record<string, unknown>> {
  const config = loadAppConfig({ ...OPENAPI_ENV, DATABASE_URL: databaseUrl });
  const app = await createApp(config, createLogger('silent'));
  try {
    const res = await app.inject({ method: 'GET', url: '/docs-json' });
    if (res.statusCode !== 200) throw new Error(`GET /docs-json answered ${res.statusCode}: ${res.body.slice(0, 500)}`);
    return JSON.parse(res.body) as Record<string, unknown>;
  } finally {
    await app.close();
  }
}

/** The committed form: two-space indentation, trailing newline. */
export function serializeOpenApiDocument(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

async function main() {
  // Imported here so that the test, which has its own database, does not load them.
  const { startEmbeddedPostgres } = await import('../src/database/embedded-postgres');
  const { applyMigrations } = await import('../src/database/migrator');
  const database = await startEmbeddedPostgres();
  try {
    await applyMigrations(database.url);
    const text = serializeOpenApiDocument(await fetchServedOpenApiDocument(database.url));
    writeFileSync(OPENAPI_PATH, text);
    const paths = Object.keys((JSON.parse(text) as { paths?: object }).paths ?? {}).length;
    process.stdout.write(`wrote ${OPENAPI_PATH} (${paths} paths, ${Buffer.byteLength(text)} bytes)\n`);
  } finally {
    await database.stop();
  }
}

if (require.main === module) {
  main().then(
    // The WebAssembly schema engine leaves timers behind; the work is done.
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`docs:openapi failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
