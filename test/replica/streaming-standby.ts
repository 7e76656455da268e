import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { appendFile, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../support/test-service';

const run = promisify(execFile);

/** Debian's PostgreSQL server programs, of the newest version installed (15 on the CI machine), as .ci/run starts the newest cluster. */
export const POSTGRES_BIN = join(
  '/usr/lib/postgresql',
  (existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : ['15']).sort((a, b) => Number(a) - Number(b)).pop() ?? '15',
  'bin',
);
/** Every cluster of this suite lives in a directory named so: a run killed midway is cleaned up by the next. */
const DIRECTORY_PREFIX = 'bff-replica-suite-';

export interface StreamingPair {
  /** The primary's `postgres` database, as the superuser. */
  primaryUrl: string;
  /** The standby's `postgres` database, as `user` (default the superuser). */
  standbyUrl(user?: string): string;
  /** Stops the standby (fast shutdown), or starts it again. */
  stopStandby(): Promise<void>;
  startStandby(): Promise<void>;
  /** Stops both servers and removes their directory. */
  stop(): Promise<void>;
}

/** Why this suite cannot run here, or undefined when it can. */
export function replicaTestsUnavailable(): string | undefined {
  for (const program of ['initdb', 'pg_ctl', 'pg_basebackup'])
    if (!existsSync(join(POSTGRES_BIN, program))) return `${join(POSTGRES_BIN, program)} is missing (apt-get install -y postgresql)`;
  if (process.getuid?.() === 0 && !existsSync('/usr/sbin/runuser')) return 'running as root without runuser to become the postgres user';
  return undefined;
}

/**
 * PostgreSQL refuses to run as root: as root (CI) every server program runs as the `postgres` OS
 * user, in a directory it owns.
 */
function asPostgres(program: string, args: string[]) {
  const path = join(POSTGRES_BIN, program);
  return process.getuid?.() === 0 ? run('/usr/sbin/runuser', ['-u', 'postgres', '--', path, ...args]) : run(path, args);
}

const pgCtl = (dataDir: string, ...args: string[]) => asPostgres('pg_ctl', ['-D', dataDir, '-l', `${dataDir}.log`, ...args]);

/** The file naming the test process a directory belongs to. */
const OWNER_FILE = 'owner.pid';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stops and removes the clusters a previous run left behind (killed before its afterAll); never those of a run still going. */
async function removeLeftovers(): Promise<void> {
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(DIRECTORY_PREFIX))) {
    const dir = join(tmpdir(), name);
    const owner = Number(await readFile(join(dir, OWNER_FILE), 'utf8').catch(() => '0'));
    if (owner && alive(owner)) continue;
    for (const server of ['standby', 'primary'])
      if (existsSync(join(dir, server, 'postmaster.pid'))) await pgCtl(join(dir, server), '-m', 'immediate', 'stop').catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A private primary and its streaming standby on two free loopback ports: initdb, then
 * `pg_basebackup -R` (the standby streams from the primary as soon as it starts), authentication
 * `trust` on loopback only. Fast to make and throw away: no fsync.
 */
export async function startStreamingPair(): Promise<StreamingPair> {
  await removeLeftovers();
  const dir = await mkdtemp(join(tmpdir(), DIRECTORY_PREFIX));
  await writeFile(join(dir, OWNER_FILE), String(process.pid));
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(group.trim()));
  }
  const primary = join(dir, 'primary');
  const standby = join(dir, 'standby');
  const primaryPort = await freePort();
  let standbyPort = await freePort();
  while (standbyPort === primaryPort) standbyPort = await freePort();
  const settings = (port: number) =>
    [
      '',
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'wal_level = replica',
      'max_wal_senders = 5',
      'fsync = off',
      'full_page_writes = off',
      // Table and database statistics: the suite reads them on the standby to see who served a read.
      'track_counts = on',
      '',
    ].join('\n');
  try {
    await asPostgres('initdb', ['-D', primary, '-U', 'postgres', '--auth=trust', '--no-sync', '--no-locale', '-E', 'UTF8']);
    await appendFile(join(primary, 'postgresql.conf'), settings(primaryPort));
    await appendFile(join(primary, 'pg_hba.conf'), 'host replication all 127.0.0.1/32 trust\n');
    await pgCtl(primary, '-w', 'start');
    await asPostgres('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      standby,
      '-R',
      '-X',
      'stream',
    ]);
    // Appended last, so it wins over the primary's lines copied with the base backup.
    await appendFile(join(standby, 'postgresql.conf'), settings(standbyPort));
    await pgCtl(standby, '-w', 'start');
  } catch (error) {
    await stopAll(primary, standby, dir);
    throw error;
  }
  return {
    primaryUrl: `postgresql://postgres@127.0.0.1:${primaryPort}/postgres`,
    standbyUrl: (user = 'postgres') => `postgresql://${user}@127.0.0.1:${standbyPort}/postgres`,
    stopStandby: () => pgCtl(standby, '-m', 'fast', '-w', 'stop').then(() => undefined),
    startStandby: () => pgCtl(standby, '-w', 'start').then(() => undefined),
    stop: () => stopAll(primary, standby, dir),
  };
}

async function stopAll(primary: string, standby: string, dir: string): Promise<void> {
  for (const server of [standby, primary])
    if (existsSync(join(server, 'postmaster.pid'))) await pgCtl(server, '-m', 'immediate', '-w', 'stop').catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
}
