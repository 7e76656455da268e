// `npm run bench:startup`: how long each documented start takes to answer GET /health/ready.
//
// - `start:prod`: the built service, in production mode, with start:prod's node options and environment,
//   on a database of its own on real PostgreSQL (BENCH_DATABASE_URL, default the local server),
//   migrated by one unmeasured start first.
// - `npm start` (second run): `npm start` itself, as the README's walk-through runs it, on the embedded
//   database in a fresh data directory that one unmeasured `npm start` created first.
//
// Each start is measured from the spawn to the first 200 from /health/ready (polled every 5 ms), then
// stopped with SIGTERM. BENCH_STARTS (default 5) starts of each; BENCH_STARTUP=prod or npm measures
// one of the two. `start:prod` runs on the bench's node (BENCH_NODE, by default the major the image
// runs: bench/processes.mjs benchNode); BENCH_ENTRY=bundle,dist starts each entry in turn (an A/B,
// alternating), and the RSS of each start is read once it is ready. Plain Node, never part of `npm test`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchNode, freePort, groupRssBytes, serviceCommand, startGroup, stopGroup, waitUntilAnswering } from './processes.mjs';
import { ROOT, freshDatabase, requireBuild } from './scale-support.mjs';

const STARTS = Number(process.env.BENCH_STARTS ?? 5);
/** `prod`, `npm` or both (the default). */
const WHICH = process.env.BENCH_STARTUP ?? 'both';
const GOALS = { prod: 1500, npm: 5000 };

/** Production settings that pass the configuration checks; nothing here is ever called. */
function productionEnv(databaseUrl, port) {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    PROVIDER_BASE_URL: 'http://127.0.0.1:9',
    PROVIDER_API_KEY: 'bench-key',
    PROVIDER_SECRET_KEY: 'bench-secret',
    PROVIDER_SP_AUTH_TOKEN: 'bench-sp-token',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    CALLBACK_SIGNING_SECRET: 'c'.repeat(48),
    DATA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    AUTH_JWT_SECRET: 'j'.repeat(48),
    LOG_LEVEL: 'warn',
  };
}

/** Milliseconds from the spawn of `command` to the first 200 from its /health/ready (and its RSS then, in `rss`); stopped after. */
async function readyAfter(command, args, env, port, logFile, rss = []) {
  const started = process.hrtime.bigint();
  const group = startGroup(command, command, args, { env: { ...process.env, ...env }, logFile, cwd: ROOT });
  try {
    await waitUntilAnswering(group, `http://127.0.0.1:${port}/health/ready`, 120_000, 5);
    const ready = Number(process.hrtime.bigint() - started) / 1e6;
    rss.push(groupRssBytes(group));
    return ready;
  } finally {
    await stopGroup(group, 15_000);
  }
}

function summary(label, times, goal) {
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  const verdict = median < goal ? 'PASS' : 'FAIL';
  console.log(
    `${label.padEnd(22)} ready after ${sorted.map((t) => (t / 1000).toFixed(2)).join(', ')} s; median ${(median / 1000).toFixed(2)} s (goal < ${goal / 1000} s) ${verdict}`,
  );
  return verdict === 'PASS';
}

async function main() {
  requireBuild();
  const node = benchNode(ROOT);
  const entries = (process.env.BENCH_ENTRY?.trim() || '').split(',').map((entry) => entry.trim() || undefined);
  const commands = entries.map((entry) => serviceCommand(ROOT, { entry }));
  const database = await freshDatabase('bench_startup');
  const prodTimes = commands.map(() => []);
  const prodRss = commands.map(() => []);
  const npmTimes = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-startup-'));
  // What the starts print, for a start that fails (kept only then).
  const log = join(tmpdir(), `bench-startup-${process.pid}.log`);
  try {
    const port = await freePort();
    if (WHICH !== 'npm') {
      console.log(`start:prod on node ${node.version} (${node.path}; ${node.note})`);
      const [first] = commands;
      await readyAfter(
        node.path,
        [...first.nodeOptions, first.entry, '--migrate'],
        { ...first.env, ...productionEnv(database.url, port) },
        port,
        log,
      );
      for (let i = 0; i < STARTS; i++) {
        for (const [index, command] of commands.entries()) {
          const port = await freePort();
          prodTimes[index].push(
            await readyAfter(
              node.path,
              [...command.nodeOptions, command.entry],
              { ...command.env, ...productionEnv(database.url, port) },
              port,
              log,
              prodRss[index],
            ),
          );
        }
      }
    }

    if (WHICH !== 'prod') {
      const npmEnv = (port) => ({ PORT: String(port), EMBEDDED_DATA_DIR: join(dataDir, 'pglite'), LOG_LEVEL: 'warn' });
      const first = await freePort();
      const firstRun = await readyAfter('npm', ['start'], npmEnv(first), first, log);
      console.log(`npm start (first run)  ready after ${(firstRun / 1000).toFixed(2)} s (not measured against a goal)`);
      for (let i = 0; i < STARTS; i++) {
        const port = await freePort();
        npmTimes.push(await readyAfter('npm', ['start'], npmEnv(port), port, log));
      }
    }
  } finally {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  rmSync(log, { force: true });
  let prodOk = true;
  if (WHICH !== 'npm') {
    for (const [index, command] of commands.entries()) {
      const label = commands.length > 1 ? `start:prod ${command.entry}` : 'start:prod';
      prodOk = summary(label, prodTimes[index], GOALS.prod) && prodOk;
      const rss = [...prodRss[index]].sort((a, b) => a - b);
      console.log(`${''.padEnd(22)} RSS when ready ${rss.map((bytes) => (bytes / 1024 / 1024).toFixed(0)).join(', ')} MB`);
    }
  }
  const npmOk = WHICH === 'prod' || summary('npm start (second run)', npmTimes, GOALS.npm);
  if (!prodOk || !npmOk) process.exitCode = 1;
}

await main();
