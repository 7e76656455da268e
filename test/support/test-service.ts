import { createServer } from 'node:net';
import type { DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type AppConfig, loadAppConfig } from '../../src/config/app-config';
import { createApp } from '../../src/create-app';
import { Database } from '../../src/database/database';
import { createLogger } from '../../src/logging/logger';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import type { SandboxOptions } from '../../src/sandbox/sandbox.options';
import { mintToken } from '../../src/auth/token-minter';
import type { Role } from '../../src/auth/auth.types';
import { LogCapture } from './log-capture';
import { testDatabaseUrl } from './test-database';

export interface TestService {
  app: NestFastifyApplication;
  config: AppConfig;
  prisma: Database;
  logs: LogCapture;
  /** The Fastify server, for supertest. */
  server: ReturnType<NestFastifyApplication['getHttpServer']>;
  get<T>(type: abstract new (...args: never[]) => T): T;
  bearer(sub: string, ...roles: Role[]): Promise<string>;
  close(): Promise<void>;
}

/** A sandbox for a test file; every service of the file talks to it. */
export async function startTestSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  return startSandbox({ callbackDelayMs: 100, ...options });
}

/**
 * One instance of the service on the test database, wired like production (adapter-pg, real HTTP
 * to the sandbox), with logs captured. Start two on the same database to test coordination.
 */
export async function startTestService(
  sandbox: RunningSandbox,
  env: Record<string, string> = {},
  extraImports: DynamicModule['imports'] = [],
  /**
   * `host`: the address to listen on (default 127.0.0.1), e.g. 0.0.0.0 to be reached from another computer;
   * `port`: the port (default a free one), when something set up before the service must know its URL.
   */
  options: { listen?: boolean; host?: string; port?: number } = {},
): Promise<TestService> {
  // Listening on a real port is what lets the sandbox deliver callbacks to this instance.
  const port = options.listen ? (options.port ?? (await freePort())) : undefined;
  const config = loadAppConfig({
    ...(port ? { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } : {}),
    NODE_ENV: 'test',
    DATABASE_URL: testDatabaseUrl(),
    PROVIDER_BASE_URL: sandbox.url,
    PROVIDER_TIMEOUT_MS: '5000',
    LOG_LEVEL: 'debug',
    // Instances of one deployment share the callback key (development picks a random one per process).
    CALLBACK_SIGNING_SECRET: 'test-callback-signing-secret-0123456789abcdef',
    ...env,
  });
  const logs = new LogCapture();
  const app = await createApp(config, createLogger(config.logLevel, logs.destination), { extraImports });
  await app.getHttpAdapter().getInstance().ready();
  if (port) await app.listen({ port, host: options.host ?? '127.0.0.1' });
  return {
    app,
    config,
    logs,
    prisma: app.get(Database),
    server: app.getHttpServer(),
    get: (type) => app.get(type as never),
    bearer: (sub, ...roles) => mintToken({ sub, roles: roles.length ? roles : ['customer'], ttl: '1h', secret: config.auth.jwtSecret! }),
    close: () => app.close(),
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
