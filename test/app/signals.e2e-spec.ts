import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { mintToken } from '../../src/auth/token-minter';
import { orderRequest } from '../support/provider-factories';
import { startChildService, type ChildService } from '../support/child-service';
import { testDatabaseUrl } from '../support/test-database';

const JWT_SECRET = 'signals-test-jwt-secret-0123456789abcdefghijklmn';

/** `npm start`'s command, with the embedded or the test database, ready when /health/ready says so. */
function startChild(env: Record<string, string>): Promise<ChildService> {
  return startChildService(
    { AUTH_JWT_SECRET: JWT_SECRET, LOG_LEVEL: 'info', ...env },
    { args: ['--migrate'], readyPath: '/health/ready', startTimeoutMs: 90_000 },
  );
}

/** Sends the signals and waits for the exit; a child still running after 30 s is killed and reported. */
async function stopWith(service: ChildService, ...signals: NodeJS.Signals[]) {
  for (const signal of signals) {
    service.child.kill(signal);
    await sleep(20);
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'still running'>((done) => (timer = setTimeout(() => done('still running'), 30_000)));
  const result = await Promise.race([service.exited, timeout]);
  clearTimeout(timer);
  if (result === 'still running') {
    service.child.kill('SIGKILL');
    throw new Error(`the service did not stop within 30 s: ${service.output()}`);
  }
  return result;
}

/**
 * The state PostgreSQL records in global/pg_control (ControlFileData.state, a 4-byte enum after the
 * 8-byte system identifier and two 4-byte version numbers): 1 after a clean shutdown, 6 while
 * running, hence also after a crash, when the next start has to recover.
 */
const DB_SHUTDOWNED = 1;
function clusterState(dataDir: string): number {
  return readFileSync(join(dataDir, 'global', 'pg_control')).readUInt32LE(16);
}

// Each case starts the real service (PGlite and migrations included) once or twice.
const CHILD_TEST_TIMEOUT_MS = 180_000;

/**
 * docker stop, Kubernetes and Ctrl-C end the service with a clean stop and exit code 0; the
 * embedded database is closed so that its data directory opens again as it was.
 */
describe('stop signals', () => {
  const running: ChildService[] = [];
  const dataDirs: string[] = [];
  const start = async (env: Record<string, string>) => {
    const service = await startChild(env);
    running.push(service);
    return service;
  };
  afterAll(() => {
    for (const { child } of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s stops the service cleanly with exit code 0',
    async (signal) => {
      const service = await start({ DATABASE_URL: testDatabaseUrl() });

      expect(await stopWith(service, signal)).toEqual({ code: 0, signal: null });
      expect(service.output()).toContain(`"signal":"${signal}","msg":"shutting down"`);
      expect(service.output()).toContain('"msg":"stopped"');
    },
    CHILD_TEST_TIMEOUT_MS,
  );

  it(
    'Ctrl-C closes the embedded database cleanly: the next start on the same data directory has the data',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'bff-signals-'));
      dataDirs.push(dataDir);
      const env = { EMBEDDED_DATA_DIR: dataDir };
      const token = await mintToken({ sub: 'cust_signals', roles: ['customer'], ttl: '1h', secret: JWT_SECRET });
      const headers = { authorization: `Bearer ${token}` };

      const first = await start(env);
      const created = await fetch(`${first.base}/v1/orders`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
        body: JSON.stringify(orderRequest()),
      });
      expect(created.status).toBe(201);
      const order = (await created.json()) as { id: string; amount: string };
      // Under `node --watch` (npm run start:dev), Ctrl-C arrives twice: from the terminal and forwarded.
      expect(await stopWith(first, 'SIGINT', 'SIGINT')).toEqual({ code: 0, signal: null });
      expect(clusterState(dataDir)).toBe(DB_SHUTDOWNED);

      const second = await start(env);
      const read = await fetch(`${second.base}/v1/orders/${order.id}`, { headers });
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ id: order.id, amount: order.amount });
      expect(await stopWith(second, 'SIGTERM')).toEqual({ code: 0, signal: null });
      expect(clusterState(dataDir)).toBe(DB_SHUTDOWNED);
    },
    CHILD_TEST_TIMEOUT_MS,
  );
});
