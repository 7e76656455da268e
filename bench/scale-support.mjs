// Shared by the scale benchmarks (bench/streams.mjs, bench/scale-lists.mjs): a fresh database on
// real PostgreSQL, the built service started on it as a child process, tokens, and the child's RSS.
// Plain Node, never part of `npm test`.
import { spawn } from 'node:child_process';
import { readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SignJWT } from 'jose';
import { addMinimalWriteKey, migrateDatabase } from './database.mjs';
import { freePort, productionCommand, startGroup, stopGroup, waitUntilAnswering } from './processes.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The development secret of src/config/app-config.ts: the service runs with its development defaults. */
const DEV_JWT_SECRET = 'development-only-jwt-secret-change-me-0123456789';

export const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** A database of its own on the server of BENCH_DATABASE_URL (default: the local server), dropped by `drop()`. */
export async function freshDatabase(prefix) {
  const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const name = `${prefix}_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const again = new pg.Client({ connectionString: serverUrl });
      await again.connect();
      await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await again.end();
    },
  };
}

export function requireBuild() {
  if (!existsSync(resolve(ROOT, 'dist/main.js'))) throw new Error('dist/main.js is missing: run `npm run build` first');
}

/**
 * The built service on `databaseUrl` with the node options and environment assignments of
 * `npm run start:prod` (heap and malloc settings: memory is what these benches measure), but development
 * defaults (in-process provider sandbox, development JWT secret), with a statement counter preloaded: `statements()` asks the child how
 * many statements its pg connections have sent so far. As in production, the database is migrated
 * first by `npm run db:migrate` and the service does not migrate at its start: a start that applied
 * the migrations in the service's own process had V8 pretenure the rows pg builds, and every page
 * then promoted its rows (see docs/performance.md, "bench:scale").
 */
export async function startService(databaseUrl, env = {}) {
  requireBuild();
  migrateDatabase(ROOT, databaseUrl, ['ignore', 'ignore', 'inherit']);
  // Before the service prepares anything: the bare server started later would add it under its statements.
  await addMinimalWriteKey(databaseUrl);
  const production = productionCommand(ROOT);
  const child = spawn(
    process.execPath,
    [...production.nodeOptions, '--expose-gc', '-r', resolve(ROOT, 'bench/scale-statement-counter.cjs'), production.entry],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ...production.env,
        NODE_ENV: 'development',
        DATABASE_URL: databaseUrl,
        PORT: '0',
        LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    },
  );
  let output = '';
  const url = await new Promise((resolveUrl, reject) => {
    child.once('exit', (code) => reject(new Error(`the service exited with ${code} before listening:\n${output}`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      if (output.length < 100_000) output += chunk;
      const listening = output.split('\n').find((line) => line.includes('payments BFF listening'));
      if (listening) resolveUrl(JSON.parse(listening).url);
    });
  });
  child.stdout.resume();
  const ask = (what) =>
    new Promise((answer) => {
      child.once('message', answer);
      child.send(what);
    });
  return {
    url,
    pid: child.pid,
    rssBytes: () => rssOf(child.pid),
    statements: () => ask('statements').then((message) => message.statements),
    recentStatements: () => ask('statements').then((message) => message.recent),
    /** process.memoryUsage() of the service, after a full collection. */
    memory: () => ask('memory').then((message) => message.memory),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The yardstick of bench/bare-server.mjs (plain `node`, as `npm run bench` runs it) on `databaseUrl`,
 * verifying the development JWT secret; its provider is never called by the routes the scale
 * benchmarks read.
 */
export async function startBareServer(databaseUrl) {
  const port = await freePort();
  // What it prints, named in the error if it does not start; removed once it has stopped.
  const logFile = join(tmpdir(), `bench-bare-${process.pid}.log`);
  const group = startGroup('bare', process.execPath, [resolve(ROOT, 'bench/bare-server.mjs')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      BARE_PORT: String(port),
      DATABASE_URL: databaseUrl,
      AUTH_JWT_SECRET: DEV_JWT_SECRET,
      PROVIDER_BASE_URL: 'http://127.0.0.1:9',
      PROVIDER_API_KEY: 'unused',
      PROVIDER_SECRET_KEY: 'unused',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      CALLBACK_SIGNING_SECRET: 'unused',
      PROVIDER_AGENT_HOURLY_LIMIT: '600',
    },
    logFile,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilAnswering(group, `${url}/health/live`);
  return {
    url,
    async stop() {
      await stopGroup(group);
      rmSync(logFile, { force: true });
    },
  };
}

export function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) * 1024;
}

export function bearer(sub, roles) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ roles })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(new TextEncoder().encode(DEV_JWT_SECRET));
}

export const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
