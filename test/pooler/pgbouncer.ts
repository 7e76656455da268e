import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { freePort } from '../support/test-service';

/** Debian's PgBouncer (`apt-get install pgbouncer`: 1.18 on Debian 12, without max_prepared_statements). */
export const PGBOUNCER_BINARY = '/usr/sbin/pgbouncer';

export interface RunningPgBouncer {
  /** `databaseUrl`'s database through the pooler, marked `pgbouncer=true` or not. */
  urlFor(databaseUrl: string, options: { pooled: boolean }): string;
  /** The client connections PgBouncer holds now (its admin console's SHOW CLIENTS). */
  clients(): Promise<{ database: string; application_name: string }[]>;
  /** What PgBouncer printed so far. */
  output(): string;
  stop(): Promise<void>;
}

/** Why the pooler tests cannot run here, or undefined when they can. */
export function poolerTestsUnavailable(): string | undefined {
  if (!existsSync(PGBOUNCER_BINARY)) return `${PGBOUNCER_BINARY} is missing (apt-get install -y pgbouncer)`;
  // The embedded PGlite is one session for every connection: the pooler would change nothing.
  if (!process.env.TEST_DATABASE_URL) return 'TEST_DATABASE_URL is not set (a real PostgreSQL server is needed)';
  return undefined;
}

/**
 * PgBouncer in transaction mode in front of the PostgreSQL server of `serverUrl`, on a free
 * loopback port, its configuration in a directory of its own. Authentication is `trust` (the test
 * server trusts loopback). PgBouncer refuses to run as root: as root it is started with
 * `-u postgres`, so the directory and files are made readable by that user.
 */
export async function startPgBouncer(serverUrl: string): Promise<RunningPgBouncer> {
  const server = new URL(serverUrl);
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'pgbouncer-'));
  await chmod(dir, 0o755);
  const user = decodeURIComponent(server.username) || 'postgres';
  const password = decodeURIComponent(server.password);
  const quoted = (value: string) => `"${value.replace(/"/g, '""')}"`;
  await writeFile(join(dir, 'users.txt'), `${quoted(user)} ${quoted(password)}\n`, { mode: 0o644 });
  await writeFile(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      'default_pool_size = 20',
      `admin_users = ${user}`,
      // Startup parameters are left as PgBouncer 1.18 treats them: the service must send none it refuses.
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER_BINARY, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5_000).then(() => child.kill('SIGKILL'))]);
    }
    await rm(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`PgBouncer did not start: ${output}`);
    }
    await sleep(50);
  }
  return {
    urlFor(databaseUrl, { pooled }) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      if (pooled) url.searchParams.set('pgbouncer', 'true');
      return url.toString();
    },
    async clients() {
      const admin = new Client({ host: '127.0.0.1', port, user, password: password || undefined, database: 'pgbouncer' });
      await admin.connect();
      try {
        return (await admin.query<{ database: string; application_name: string }>('SHOW CLIENTS')).rows;
      } finally {
        await admin.end();
      }
    },
    output: () => output,
    stop,
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
