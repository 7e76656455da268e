/**
 * `npm run bench` (after `npm run build`): the service in production mode and the bare server of
 * bench/bare-server.mjs (and, for `POST /v1/orders`, the bare server's minimal write), side by side on a fresh database of BENCH_DATABASE_URL's server, the
 * provider sandbox in a third process, autocannon against each in turn. See docs/performance.md.
 *
 * BENCH_DATABASE_URL (postgresql://postgres@127.0.0.1:5432/postgres), BENCH_DURATION (10 s per
 * run), BENCH_WARMUP (5 s), BENCH_RUNS (2 per server and path), BENCH_STRICT=1 (exit 1 on a FAIL),
 * BENCH_BASELINE=<git ref> (a second service built from that commit, measured alternating with the
 * others: the change against it, in the same run).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { SignJWT } from 'jose';
import { createDatabase, databaseUrlFor, dropDatabase, migrateDatabase, seedOrders } from './database.mjs';
import {
  freePort,
  groupCpuMicros,
  groupPeakRssBytes,
  postgresCpuMicros,
  productionCommand,
  startGroup,
  statementCounts,
  stopGroup,
  waitUntilAnswering,
} from './processes.mjs';
import { printReport } from './report.mjs';

const positiveInteger = (name, fallback) => {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${name} must be a positive whole number (got "${raw}")`);
  return Number(raw);
};
const settings = {
  serverUrl: process.env.BENCH_DATABASE_URL?.trim() || 'postgresql://postgres@127.0.0.1:5432/postgres',
  durationSeconds: positiveInteger('BENCH_DURATION', 10),
  warmupSeconds: positiveInteger('BENCH_WARMUP', 5),
  runs: positiveInteger('BENCH_RUNS', 2),
  strict: process.env.BENCH_STRICT === '1',
  /** High enough for every POST of the run, for both servers: the provider's 600/h would stop a run in seconds. */
  agentHourlyLimit: 1_000_000,
  baselineRef: process.env.BENCH_BASELINE?.trim() || undefined,
};
const root = new URL('..', import.meta.url).pathname;
const CUSTOMER = 'bench-customer';

/** `servers`: who is measured on the path, alternating in this order. */
const PATHS = [
  { name: 'GET /v1/orders/{id}', connections: 50, servers: ['service', 'bare'] },
  { name: 'POST /v1/orders', connections: 20, servers: ['service', 'bare', 'minimal'] },
];

function requestsFor(path, orderIds, pathPrefix = '') {
  if (path.name.startsWith('GET')) {
    let next = 0;
    return [
      {
        method: 'GET',
        setupRequest: (request) => ({ ...request, path: `/v1/orders/${orderIds[next++ % orderIds.length]}` }),
      },
    ];
  }
  const body = JSON.stringify({
    amount: '1500',
    currency: 'XAF',
    // The sandbox's NO_CALLBACK wallet: PROCESSING at once, no callback to load the servers during the run.
    wallet: '237600000006',
    service: 1,
    description: 'Bench order',
    payer: 'Bench Payer',
    payerEmail: 'bench@example.com',
  });
  return [
    {
      method: 'POST',
      path: `${pathPrefix}/v1/orders`,
      body,
      setupRequest: (request) => ({ ...request, headers: { ...request.headers, 'idempotency-key': randomUUID() } }),
    },
  ];
}

async function measure(server, path, token, orderIds, seconds) {
  const cpuBefore = groupCpuMicros(server.group);
  const databaseCpuBefore = postgresCpuMicros();
  const countsBefore = await statementCounts(server.counterPort);
  const result = await autocannon({
    url: server.url,
    connections: path.connections,
    duration: seconds,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    requests: requestsFor(path, orderIds, server.pathPrefix),
  });
  const countsAfter = await settledCounts(server.counterPort);
  const cpuMicros = groupCpuMicros(server.group) - cpuBefore;
  // Only one server is loaded at a time: what PostgreSQL spent meanwhile is this server's statements and commits.
  const databaseCpuAfter = postgresCpuMicros();
  return {
    server: server.name,
    completed: result.requests.total,
    responses: countsAfter.responses - countsBefore.responses,
    failed: result.non2xx + result.errors + result.timeouts,
    seconds: result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMicros,
    databaseCpuMicros: databaseCpuBefore === undefined || databaseCpuAfter === undefined ? undefined : databaseCpuAfter - databaseCpuBefore,
    statements: countsAfter.statements - countsBefore.statements,
    transactions: countsAfter.transactions - countsBefore.transactions,
  };
}

/** The counters once the requests still in flight when autocannon stopped are done (no response for 300 ms). */
async function settledCounts(counterPort) {
  let counts = await statementCounts(counterPort);
  for (let round = 0; round < 50; round++) {
    await sleep(300);
    const next = await statementCounts(counterPort);
    if (next.responses === counts.responses) return next;
    counts = next;
  }
  return counts;
}

const keysOf = (value) => Object.keys(value).sort().join(',');
/** Measuring order on a path: the service, the baseline (BENCH_BASELINE), then the bare server and the minimal write. */
const order = (name) => ['service', 'baseline', 'bare', 'minimal'].indexOf(name);

/**
 * The servers must do the same work, or the ratios mean nothing: the same order read through the
 * service and the bare server must answer the same JSON, and a pay-in through each of the three
 * (the minimal write included) must answer 201 PROCESSING in the same shape.
 */
async function checkSameAnswers(servers, token, orderId) {
  const reads = [];
  const created = [];
  for (const server of servers) {
    if (server.name !== 'minimal') {
      const read = await fetch(`${server.url}/v1/orders/${orderId}`, { headers: { authorization: `Bearer ${token}` } });
      reads.push({ status: read.status, body: await read.json() });
    }
    const answer = await fetch(`${server.url}${server.pathPrefix}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: requestsFor(PATHS[1], [])[0].body,
    });
    if (answer.status !== 201) throw new Error(`${server.name}: a bench pay-in answered ${answer.status}`);
    created.push(await answer.json());
  }
  if (JSON.stringify(reads[0]) !== JSON.stringify(reads[1])) {
    throw new Error(`the servers answer GET differently:\n${JSON.stringify(reads[0])}\n${JSON.stringify(reads[1])}`);
  }
  if (created.some((answer) => keysOf(answer) !== keysOf(created[0]) || answer.status !== 'PROCESSING')) {
    throw new Error(`the servers answer POST differently:\n${created.map((answer) => JSON.stringify(answer)).join('\n')}`);
  }
}

function build(cwd = root) {
  if (process.env.BENCH_SKIP_BUILD === '1' && cwd === root) return;
  const built = spawnSync('npm', ['run', '-s', 'build'], { cwd, stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`npm run build failed in ${cwd}`);
}

/**
 * BENCH_BASELINE: the service as it was at `ref`, checked out in a temporary git worktree (this
 * checkout's node_modules linked in) and built there. Answers its directory and how to remove it.
 */
function buildBaseline(ref) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-baseline-'));
  execFileSync('git', ['worktree', 'add', '--detach', dir, ref], { cwd: root, stdio: 'ignore' });
  const remove = () => {
    spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    build(dir);
  } catch (error) {
    remove();
    throw error;
  }
  return { dir, remove };
}

async function main() {
  build();
  const baseline = settings.baselineRef ? buildBaseline(settings.baselineRef) : undefined;
  const logDir = mkdtempSync(join(tmpdir(), 'bench-'));
  const database = `bench_${Date.now()}_${process.pid}`;
  const databaseUrl = databaseUrlFor(settings.serverUrl, database);
  const groups = [];
  let databaseCreated = false;
  const cleanUp = async () => {
    for (const group of groups.reverse()) await stopGroup(group);
    groups.length = 0;
    if (databaseCreated) await dropDatabase(settings.serverUrl, database);
    databaseCreated = false;
    baseline?.remove();
  };
  const interrupted = () => {
    cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    await createDatabase(settings.serverUrl, database);
    databaseCreated = true;
    migrateDatabase(root, databaseUrl);
    const orderIds = await seedOrders(databaseUrl, { customerId: CUSTOMER, owned: 1_000, others: 20_000 });

    const [sandboxPort, servicePort, barePort, serviceCounterPort, bareCounterPort, baselinePort, baselineCounterPort] = await Promise.all(
      Array.from({ length: 7 }, () => freePort()),
    );
    const secrets = {
      AUTH_JWT_SECRET: randomBytes(48).toString('base64'),
      CALLBACK_SIGNING_SECRET: randomBytes(32).toString('base64'),
      DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      PROVIDER_API_KEY: 'sandbox-public-apikey',
      PROVIDER_SECRET_KEY: 'sandbox-private-secretkey',
      PROVIDER_SP_AUTH_TOKEN: 'sandbox-sp-auth-token',
    };
    const common = {
      ...process.env,
      ...secrets,
      DATABASE_URL: databaseUrl,
      PROVIDER_BASE_URL: `http://127.0.0.1:${sandboxPort}`,
      PROVIDER_AGENT_HOURLY_LIMIT: String(settings.agentHourlyLimit),
      // One bench user makes every pay-in: its share of the budget is the whole budget.
      PROVIDER_CUSTOMER_HOURLY_LIMIT: String(settings.agentHourlyLimit),
    };

    const sandbox = startGroup('sandbox', process.execPath, ['-r', '@swc-node/register', 'bench/sandbox.cjs'], {
      cwd: root,
      env: { ...process.env, BENCH_SANDBOX_PORT: String(sandboxPort) },
      logFile: join(logDir, 'sandbox.log'),
    });
    groups.push(sandbox);
    await waitUntilAnswering(sandbox, `http://127.0.0.1:${sandboxPort}/__sandbox/stats`);

    /** The service of `cwd` as its `start:prod` runs it; the statement counter is always this checkout's. */
    const startService = (name, cwd, port, counterPort) => {
      const production = productionCommand(cwd);
      return startGroup(
        name,
        process.execPath,
        [...production.nodeOptions, '-r', join(root, 'bench/count-statements.cjs'), production.entry],
        {
          cwd,
          env: {
            ...common,
            ...production.env,
            NODE_ENV: 'production',
            HOST: '127.0.0.1',
            PORT: String(port),
            PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
            LOG_LEVEL: 'info',
            BENCH_COUNTER_PORT: String(counterPort),
          },
          logFile: join(logDir, `${name}.log`),
        },
      );
    };
    const production = productionCommand(root);
    const service = startService('service', root, servicePort, serviceCounterPort);
    groups.push(service);
    const baselineService = baseline && startService('baseline', baseline.dir, baselinePort, baselineCounterPort);
    if (baselineService) groups.push(baselineService);
    const bare = startGroup('bare', process.execPath, ['-r', './bench/count-statements.cjs', 'bench/bare-server.mjs'], {
      cwd: root,
      env: {
        ...common,
        NODE_ENV: 'production',
        BARE_PORT: String(barePort),
        PUBLIC_BASE_URL: `http://127.0.0.1:${barePort}`,
        BENCH_COUNTER_PORT: String(bareCounterPort),
      },
      logFile: join(logDir, 'bare.log'),
    });
    groups.push(bare);
    await waitUntilAnswering(service, `http://127.0.0.1:${servicePort}/health/ready`);
    await waitUntilAnswering(bare, `http://127.0.0.1:${barePort}/health/live`);
    if (baselineService) await waitUntilAnswering(baselineService, `http://127.0.0.1:${baselinePort}/health/ready`);

    // The minimal write is a route of the bare server's process: its CPU and statements are that process's.
    const servers = [
      { name: 'service', group: service, url: `http://127.0.0.1:${servicePort}`, counterPort: serviceCounterPort, pathPrefix: '' },
      { name: 'bare', group: bare, url: `http://127.0.0.1:${barePort}`, counterPort: bareCounterPort, pathPrefix: '' },
      { name: 'minimal', group: bare, url: `http://127.0.0.1:${barePort}`, counterPort: bareCounterPort, pathPrefix: '/minimal' },
      ...(baselineService
        ? [
            {
              name: 'baseline',
              group: baselineService,
              url: `http://127.0.0.1:${baselinePort}`,
              counterPort: baselineCounterPort,
              pathPrefix: '',
            },
          ]
        : []),
    ];
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ roles: ['customer'] })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(CUSTOMER)
      .setIssuedAt(now)
      .setExpirationTime(now + 4 * 3600)
      .sign(new TextEncoder().encode(secrets.AUTH_JWT_SECRET));

    await checkSameAnswers(servers, token, orderIds[0]);
    process.stderr.write(
      `bench: database ${database}, logs in ${logDir}, ${settings.runs} × ${settings.durationSeconds} s per server and path ` +
        `after ${settings.warmupSeconds} s of warm-up, PROVIDER_AGENT_HOURLY_LIMIT=${settings.agentHourlyLimit}\n` +
        `bench: service started as start:prod runs it: ${Object.entries(production.env)
          .map(([name, value]) => `${name}=${value} `)
          .join('')}` +
        `node ${production.nodeOptions.join(' ')} ${production.entry}\n`,
    );
    const results = [];
    for (const path of PATHS) {
      // The baseline right after the service, on every path: the two are measured in the same minutes.
      const onPath = servers
        .filter((server) => path.servers.includes(server.name) || server.name === 'baseline')
        .sort((a, b) => order(a.name) - order(b.name));
      for (const server of onPath) await measure(server, path, token, orderIds, settings.warmupSeconds);
      for (let run = 0; run < settings.runs; run++) {
        for (const server of onPath) {
          const measured = await measure(server, path, token, orderIds, settings.durationSeconds);
          process.stderr.write(
            `  ${path.name} ${server.name} run ${run + 1}: ${(measured.completed / measured.seconds).toFixed(0)} req/s, ` +
              `${measured.failed} failed, p99 ${measured.p99} ms\n`,
          );
          results.push({ path: path.name, connections: path.connections, ...measured });
        }
      }
    }
    const memory = { servicePeakRssBytes: groupPeakRssBytes(service), barePeakRssBytes: groupPeakRssBytes(bare) };
    const passed = printReport({ results, memory, settings: { ...settings, baselineRef: baseline && settings.baselineRef } });
    await cleanUp();
    if (!passed && settings.strict) process.exitCode = 1;
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

main().catch((error) => {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
