import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIST_LOCK, withRunLock } from '../support/run-lock';
import { freePort } from '../support/test-service';
import { until } from '../support/until';

const ROOT = resolve(__dirname, '../..');
const scripts = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** Live processes whose process group is `pgid` (field 5 of /proc/<pid>/stat), with their command lines. */
function processGroup(pgid: number): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[0] = state (Z: a zombie, already exited), fields[2] = pgrp.
      if (Number(fields[2]) !== pgid || fields[0] === 'Z') continue;
      found.push(`${entry} ${readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim()}`);
    } catch {
      // The process ended meanwhile.
    }
  }
  return found;
}

/** True when something accepts a connection on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

// A first start initialises an embedded database in a fresh data directory; start:dev builds first.
const CASE_TIMEOUT_MS = 240_000;
/** At most how long a case waits for `npm run build` of another worker to leave dist/. */
const LOCK_WAIT_MS = 300_000;

/**
 * A process manager, a terminal multiplexer or `kill <pid>` sends SIGTERM to the `npm start` process
 * itself, not to its whole process group. npm forwards SIGTERM (and SIGINT) to the shell it runs the
 * script in, and that shell (dash, bash) dies of it without passing it on: the service was left
 * running, orphaned, on its port. The scripts `exec` their command, so the shell becomes the
 * service (or `nest start`, which forwards the signal to the service itself) and npm's forwarded
 * signal reaches it.
 */
describe('SIGTERM to the npm process (or to the Nest CLI)', () => {
  it.each(['start', 'start:dev', 'start:prod'])('npm run %s replaces its shell with its command (exec)', (script) => {
    expect(scripts[script]).toMatch(/^([A-Z_][A-Z0-9_]*=\S* )*exec /);
  });

  let started: ChildProcess | undefined;
  const dataDirs: string[] = [];
  afterEach(() => {
    // Whatever a failed case left running: its whole process group.
    if (started?.pid && processGroup(started.pid).length > 0) process.kill(-started.pid, 'SIGKILL');
    started = undefined;
  });
  afterAll(() => {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Starts `command` on the embedded defaults (a fresh data directory, a free port), waits until it is
   * ready, sends SIGTERM to that one process, and checks that the whole tree stopped cleanly.
   * Answers the command lines of the tree as it was while running.
   */
  async function startThenTerminate(command: string, args: string[]): Promise<string[]> {
    const dataDir = mkdtempSync(join(tmpdir(), 'npm-start-sigterm-'));
    dataDirs.push(dataDir);
    const port = await freePort();
    // Detached: the leader of a process group of its own, so that the test finds every process
    // it started (and kills what a failure leaves behind). Only the leader gets the SIGTERM.
    const child = spawn(command, args, {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? tmpdir(),
        PORT: String(port),
        EMBEDDED_DATA_DIR: join(dataDir, 'pglite'),
        LOG_LEVEL: 'info',
        NPM_CONFIG_UPDATE_NOTIFIER: 'false',
      },
    });
    started = child;
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.once('exit', (code, signal) => done({ code, signal })),
    );

    // Ready or exited, whichever comes first; a timeout, too, fails with the output beside it.
    const ready = await until(
      `${command} ${args.join(' ')} is ready or has exited`,
      () =>
        child.exitCode !== null ||
        fetch(`http://127.0.0.1:${port}/health/ready`).then(
          (res) => res.ok,
          () => false,
        ),
      180_000,
      100,
    ).catch(() => false);
    expect([ready && child.exitCode === null, ready && child.exitCode === null ? '' : output]).toEqual([true, '']);
    const pgid = child.pid!;
    const tree = processGroup(pgid);
    // The leader and the service at least.
    expect(tree.length).toBeGreaterThanOrEqual(2);

    process.kill(pgid, 'SIGTERM');
    const stopped = await Promise.race([exited, sleep(30_000).then(() => `${command} still running 30 s after SIGTERM`)]);
    expect(stopped).toEqual({ code: 0, signal: null });
    await until(`port ${port} is free`, async () => !(await listening(port)), 5_000, 100);
    await until(`no process of group ${pgid} is left`, () => processGroup(pgid).length === 0, 5_000, 100);
    expect(processGroup(pgid)).toEqual([]);
    // The service's own clean stop, not a kill.
    expect(output).toContain('"signal":"SIGTERM","msg":"shutting down"');
    expect(output).toContain('"msg":"stopped"');
    return tree;
  }

  it.each(['start', 'start:dev'])(
    'npm run %s: the service stops cleanly, frees its port, and no process of the tree is left',
    async (script) => {
      // start:dev compiles into dist/ and runs from it, which `npm run build` may be rewriting in another worker.
      if (script === 'start:dev') await withRunLock(DIST_LOCK, () => startThenTerminate('npm', ['run', script]));
      else await startThenTerminate('npm', ['run', script]);
    },
    CASE_TIMEOUT_MS + LOCK_WAIT_MS,
  );

  it(
    "npx nest start (nest-cli.json): SIGTERM to the Nest CLI stops the service, started with a migrating start's node options",
    async () => {
      const tree = await withRunLock(DIST_LOCK, () => startThenTerminate(resolve(ROOT, 'node_modules/.bin/nest'), ['start']));
      // The CLI's shell became the service (nest-cli.json's exec): no shell in between to die of the signal.
      expect(tree.filter((command) => /^\d+ (\/bin\/)?sh /.test(command))).toEqual([]);
      expect(tree.filter((command) => command.includes('--no-allocation-site-pretenuring') && /dist\/main\b/.test(command))).toHaveLength(
        1,
      );
    },
    CASE_TIMEOUT_MS + LOCK_WAIT_MS,
  );
});
