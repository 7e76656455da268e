/** The benchmarked processes: started in their own process groups, measured from /proc, stopped. */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ): 100 on every Linux ABI node runs on. */
const TICKS_PER_SECOND = 100;

export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts `command` as the leader of a new process group (detached), its output appended to
 * `logFile`. Every process it forks stays in the group, so the group is what gets measured.
 */
export function startGroup(name, command, args, { env, logFile, cwd }) {
  const out = openSync(logFile, 'a');
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', out, out] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { name, pid: child.pid, child, exited, logFile };
}

export async function stopGroup(group, graceMs = 10_000) {
  if (group.child.exitCode !== null || group.child.signalCode !== null) return;
  try {
    process.kill(-group.pid, 'SIGTERM');
  } catch {
    return;
  }
  const done = await Promise.race([group.exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!done) {
    try {
      process.kill(-group.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    await group.exited;
  }
}

/** Polls `url` every `pollMs` until it answers 200, the process exits, or `timeoutMs` passes. */
export async function waitUntilAnswering(group, url, timeoutMs = 60_000, pollMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void group.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${group.name} exited during start-up: see ${group.logFile}`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await sleep(pollMs);
  }
  throw new Error(`${group.name} did not answer ${url} within ${timeoutMs} ms: see ${group.logFile}`);
}

function statFields(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields from the third on, after the command name (which may hold spaces and parentheses).
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU time (user + system, microseconds) of every live process of the group, plus what the leader
 * collected from its children that already exited.
 */
export function groupCpuMicros(group) {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    // fields[2] = pgrp; [11] utime, [12] stime, [13] cutime, [14] cstime.
    if (!fields || Number(fields[2]) !== group.pid) continue;
    ticks += Number(fields[11]) + Number(fields[12]);
    if (Number(entry) === group.pid) ticks += Number(fields[13]) + Number(fields[14]);
  }
  return (ticks * 1_000_000) / TICKS_PER_SECOND;
}

/**
 * CPU time (user + system, microseconds) of the PostgreSQL server on this machine: every live
 * `postgres` process (the backends, the WAL writer, the checkpointer, ...) plus what the postmaster
 * collected from the backends that already exited. Undefined when no PostgreSQL runs here (a remote
 * BENCH_DATABASE_URL): then the report says so instead of a number.
 */
export function postgresCpuMicros() {
  const postgres = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    const fields = statFields(entry);
    if (fields) postgres.set(entry, fields);
  }
  if (postgres.size === 0) return undefined;
  let ticks = 0;
  for (const fields of postgres.values()) {
    // fields[1] = ppid; [11] utime, [12] stime, [13] cutime, [14] cstime (the postmaster's: its exited backends).
    ticks += Number(fields[11]) + Number(fields[12]);
    if (!postgres.has(fields[1])) ticks += Number(fields[13]) + Number(fields[14]);
  }
  return (ticks * 1_000_000) / TICKS_PER_SECOND;
}

/** Peak resident set (VmHWM) of the group's processes, in bytes. */
export function groupPeakRssBytes(group) {
  return groupStatusBytes(group, 'VmHWM');
}

/** Resident set now (VmRSS) of the group's processes, in bytes. */
export function groupRssBytes(group) {
  return groupStatusBytes(group, 'VmRSS');
}

function groupStatusBytes(group, field) {
  let bytes = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (!fields || Number(fields[2]) !== group.pid) continue;
    try {
      const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${entry}/status`, 'utf8'));
      if (match) bytes += Number(match[1]) * 1024;
    } catch {
      // The process ended meanwhile.
    }
  }
  return bytes;
}

/** The statement counters of a server started with bench/count-statements.cjs. */
export async function statementCounts(counterPort) {
  const response = await fetch(`http://127.0.0.1:${counterPort}/`);
  return response.json();
}

/**
 * The service runs as `npm run start:prod` runs it (its environment assignments and node options, read from
 * package.json), but without npm in between: npm's own process would be counted in the service's CPU and memory.
 */
export function productionCommand(root) {
  const script = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts['start:prod'];
  const words = script.trim().split(/\s+/);
  const env = {};
  while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const [name, ...value] = words.shift().split('=');
    env[name] = value.join('=');
  }
  // `exec node …`: the shell npm starts becomes node (a signal npm forwards reaches the service).
  if (words[0] === 'exec') words.shift();
  if (words.shift() !== 'node') throw new Error(`start:prod must run node directly, not: ${script}`);
  const entry = words.pop();
  return { env, nodeOptions: words, entry };
}

/** What BENCH_ENTRY names: the file the service is started from. */
export const ENTRIES = { bundle: 'dist/main.bundle.js', dist: 'dist/main.js' };

/**
 * `productionCommand` with the bench's choices applied: BENCH_ENTRY (`bundle` or `dist`) in place of
 * start:prod's entry, and `extraNodeOptions` (BENCH_NODE_OPTIONS: flags being tried) after its options.
 */
export function serviceCommand(root, { entry = process.env.BENCH_ENTRY, extraNodeOptions = process.env.BENCH_NODE_OPTIONS } = {}) {
  const production = productionCommand(root);
  const chosen = entry?.trim();
  if (chosen && !(chosen in ENTRIES)) throw new Error(`BENCH_ENTRY must be ${Object.keys(ENTRIES).join(' or ')} (got "${chosen}")`);
  return {
    ...production,
    entry: chosen ? ENTRIES[chosen] : production.entry,
    nodeOptions: [...production.nodeOptions, ...(extraNodeOptions?.trim() ? extraNodeOptions.trim().split(/\s+/) : [])],
  };
}

/**
 * The node binary the benchmarked servers run on: BENCH_NODE if set; else the Node.js major the image
 * runs (.nvmrc, the Dockerfile's node:<major>), from the npm registry's node-linux-<arch> package
 * installed where .ci/run installs it (installed there if missing); else, when that fails, the node
 * running the bench, with a warning. Answers `{ path, version, note }`.
 */
export function benchNode(root) {
  const versionOf = (path) => spawnSync(path, ['-v'], { encoding: 'utf8' }).stdout?.trim();
  const chosen = process.env.BENCH_NODE?.trim();
  if (chosen) {
    const version = versionOf(chosen);
    if (!version) throw new Error(`BENCH_NODE=${chosen} does not run`);
    return { path: chosen, version, note: 'BENCH_NODE' };
  }
  const major = readFileSync(join(root, '.nvmrc'), 'utf8').trim();
  if (process.versions.node.split('.')[0] === major)
    return { path: process.execPath, version: process.version, note: `the image's major (${major})` };
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
  const prefix = join(process.env.TMPDIR || tmpdir(), `bff-ci-node-${major}`);
  const path = arch && join(prefix, 'node_modules', `node-linux-${arch}`, 'bin', 'node');
  if (path && !existsSync(path)) {
    process.stderr.write(`bench: installing node-linux-${arch}@${major} into ${prefix} (the Node.js the image runs)\n`);
    spawnSync(
      'npm',
      ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', prefix, `node-linux-${arch}@${major}`],
      {
        stdio: 'ignore',
      },
    );
  }
  const version = path && existsSync(path) ? versionOf(path) : undefined;
  if (version?.startsWith(`v${major}.`)) return { path, version, note: `the image's major (${major}), ${prefix}` };
  return {
    path: process.execPath,
    version: process.version,
    note: `WARNING: not the image's Node.js ${major} (node-linux-${arch}@${major} could not be installed): the bench's own`,
  };
}
