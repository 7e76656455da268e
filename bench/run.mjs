/**
 * `npm run bench` (after `npm run build`): the service in production mode and the bare server of
 * bench/bare-server.mjs side by side on a fresh database of BENCH_DATABASE_URL's server, the provider
 * sandbox in a third process, autocannon against each in turn; then the service's cold start after
 * an idle minute. See docs/performance.md.
 *
 * BENCH_DATABASE_URL (postgresql://postgres@127.0.0.1:5432/postgres); BENCH_WARMUP (30 s per server
 * and path), BENCH_RUNS (3, alternating per run), BENCH_DURATION (10 s per run); BENCH_PATHS (get,
 * post, cold: all by default); BENCH_FULL_WRITE=1 (the bare server's full write too, INFO);
 * BENCH_YARDSTICKS=0 (the service and the baseline only: an A/B);
 * BENCH_COLD_IDLE (60 s); BENCH_STRICT=1 (exit 1 on a FAIL). The service: BENCH_NODE (the node
 * binary; by default the major the image runs, see benchNode), BENCH_ENTRY (bundle or dist; by
 * default start:prod's), BENCH_NODE_OPTIONS (more node flags). A second service measured alternating
 * with the others, "baseline": BENCH_BASELINE=<git ref> (built from that commit) and/or
 * BENCH_BASELINE_ENTRY, BENCH_BASELINE_NODE_OPTIONS (this checkout, started differently).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { SignJWT } from 'jose';
import { addMinimalWriteKey, createDatabase, databaseUrlFor, dropDatabase, migrateDatabase, seedOrders } from './database.mjs';
import { keepWarm, percentile, runMix } from './mixed-client.mjs';
import {
  benchNode,
  freePort,
  groupCpuMicros,
  groupPeakRssBytes,
  groupRssBytes,
  postgresCpuMicros,
  serviceCommand,
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
const PATH_NAMES = ['get', 'post', 'cold'];
const chosenPaths = (process.env.BENCH_PATHS?.trim() || PATH_NAMES.join(',')).split(',').map((name) => name.trim().toLowerCase());
if (chosenPaths.some((name) => !PATH_NAMES.includes(name))) throw new Error(`BENCH_PATHS takes ${PATH_NAMES.join(', ')}`);
const settings = {
  serverUrl: process.env.BENCH_DATABASE_URL?.trim() || 'postgresql://postgres@127.0.0.1:5432/postgres',
  durationSeconds: positiveInteger('BENCH_DURATION', 10),
  warmupSeconds: positiveInteger('BENCH_WARMUP', 30),
  runs: positiveInteger('BENCH_RUNS', 3),
  paths: chosenPaths,
  fullWrite: process.env.BENCH_FULL_WRITE === '1',
  /** BENCH_YARDSTICKS=0: only the service and the baseline on each path (a focused A/B; no goal is judged). */
  yardsticks: process.env.BENCH_YARDSTICKS !== '0',
  strict: process.env.BENCH_STRICT === '1',
  /** High enough for every POST of the run, for both servers: the provider's 600/h would stop a run in seconds. */
  agentHourlyLimit: 1_000_000,
  baselineRef: process.env.BENCH_BASELINE?.trim() || undefined,
  baselineEntry: process.env.BENCH_BASELINE_ENTRY?.trim() || undefined,
  baselineNodeOptions: process.env.BENCH_BASELINE_NODE_OPTIONS?.trim() || undefined,
  cold: {
    idleSeconds: positiveInteger('BENCH_COLD_IDLE', 60),
    requests: 200,
    concurrency: 4,
    /** The settled mix the first requests are held against: enough for a p99 of the 10th-slowest. */
    settledRequests: 1_000,
  },
};
const root = new URL('..', import.meta.url).pathname;
const CUSTOMER = 'bench-customer';

/** `servers`: who is measured on the path, alternating per run in this order (the baseline after the service). */
const PATHS = [
  { key: 'get', name: 'GET /v1/orders/{id}', connections: 50, servers: ['service', 'bare'] },
  { key: 'post', name: 'POST /v1/orders', connections: 20, servers: ['service', 'minimal', ...(settings.fullWrite ? ['bare'] : [])] },
];
const PAY_IN_BODY = JSON.stringify({
  amount: '1500',
  currency: 'XAF',
  // The sandbox's NO_CALLBACK wallet: PROCESSING at once, no callback to load the servers during the run.
  wallet: '237600000006',
  service: 1,
  description: 'Bench order',
  payer: 'Bench Payer',
  payerEmail: 'bench@example.com',
});

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
  return [
    {
      method: 'POST',
      path: `${pathPrefix}/v1/orders`,
      body: PAY_IN_BODY,
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
/** Measuring order on a path: the service, the baseline, then the minimal write and the bare server. */
const order = (name) => ['service', 'baseline', 'minimal', 'bare'].indexOf(name);

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
      body: PAY_IN_BODY,
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

/**
 * The second service, "baseline", if any: built from BENCH_BASELINE's commit, or this checkout;
 * started from BENCH_BASELINE_ENTRY and with BENCH_BASELINE_NODE_OPTIONS when given.
 */
function prepareBaseline() {
  if (!settings.baselineRef && !settings.baselineEntry && !settings.baselineNodeOptions) return undefined;
  const built = settings.baselineRef ? buildBaseline(settings.baselineRef) : { dir: root, remove: () => undefined };
  const label = [
    settings.baselineRef && `commit ${settings.baselineRef}`,
    settings.baselineEntry && `entry ${settings.baselineEntry}`,
    settings.baselineNodeOptions && `node options ${settings.baselineNodeOptions}`,
  ]
    .filter(Boolean)
    .join(', ');
  return {
    ...built,
    label,
    command: serviceCommand(built.dir, {
      entry: settings.baselineEntry ?? process.env.BENCH_ENTRY,
      extraNodeOptions: settings.baselineNodeOptions ?? process.env.BENCH_NODE_OPTIONS,
    }),
  };
}

/** One measured run per server on `path` per round, alternating, after each server's warm-up. */
async function measurePath(path, onPath, token, orderIds) {
  const results = [];
  for (const server of onPath) {
    process.stderr.write(`  ${path.name} ${server.name}: ${settings.warmupSeconds} s of warm-up\n`);
    await measure(server, path, token, orderIds, settings.warmupSeconds);
  }
  for (let run = 0; run < settings.runs; run++) {
    for (const server of onPath) {
      const measured = await measure(server, path, token, orderIds, settings.durationSeconds);
      process.stderr.write(
        `  ${path.name} ${server.name} run ${run + 1}: ${(measured.completed / measured.seconds).toFixed(0)} req/s, ` +
          `${Math.round(measured.cpuMicros / Math.max(1, measured.responses))} µs CPU/req, ${measured.failed} failed, p99 ${measured.p99} ms\n`,
      );
      results.push({ path: path.name, connections: path.connections, ...measured });
    }
  }
  return results;
}

/**
 * The cold start. Settled: the mix of reads and pay-ins, `settledRequests` of them on kept-alive
 * connections, right after the measured runs. Then every service idles `idleSeconds` (the client
 * keeps its own code warm on the bare server meanwhile), and the first `requests` of the same mix,
 * on new connections, are timed one by one.
 */
async function measureColdStart(services, bare, token, orderIds) {
  const { idleSeconds, requests, concurrency, settledRequests } = settings.cold;
  /** The mix, with the CPU the server's process group spent on it (µs per request). */
  const mix = async (server, count, agent) => {
    const cpuBefore = groupCpuMicros(server.group);
    const measured = await runMix({ url: server.url, token, orderIds, payInBody: PAY_IN_BODY, requests: count, concurrency, agent });
    return { ...measured, cpuMicrosPerRequest: (groupCpuMicros(server.group) - cpuBefore) / count };
  };
  const settled = new Map();
  for (const server of services) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    await mix(server, 200, agent);
    settled.set(server.name, await mix(server, settledRequests, agent));
    agent.destroy();
  }
  process.stderr.write(`  cold start: the service${services.length > 1 ? 's' : ''} idle for ${idleSeconds} s\n`);
  const idle = new AbortController();
  const warmAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const warming = keepWarm({ url: bare.url, token, orderIds, payInBody: PAY_IN_BODY, agent: warmAgent }, idle.signal);
  await sleep(idleSeconds * 1000);
  const idleRssBytes = new Map(services.map((server) => [server.name, groupRssBytes(server.group)]));
  idle.abort();
  await warming;
  warmAgent.destroy();
  const results = [];
  for (const server of services) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    const first = await mix(server, requests, agent);
    agent.destroy();
    results.push({ server: server.name, settled: settled.get(server.name), first, idleRssBytes: idleRssBytes.get(server.name) });
    process.stderr.write(
      `  cold start ${server.name}: first ${requests} p50 ${percentile(first.latencies, 0.5).toFixed(1)} ms, ` +
        `p99 ${percentile(first.latencies, 0.99).toFixed(1)} ms; settled p99 ${percentile(settled.get(server.name).latencies, 0.99).toFixed(1)} ms\n`,
    );
  }
  return results;
}

async function main() {
  build();
  const node = benchNode(root);
  const baseline = prepareBaseline();
  const logDir = mkdtempSync(join(tmpdir(), 'bench-'));
  const database = `bench_${Date.now()}_${process.pid}`;
  const databaseUrl = databaseUrlFor(settings.serverUrl, database);
  const baselineDatabase = `${database}_baseline`;
  const baselineDatabaseUrl = databaseUrlFor(settings.serverUrl, baselineDatabase);
  const groups = [];
  let databaseCreated = false;
  let baselineDatabaseCreated = false;
  const cleanUp = async () => {
    for (const group of groups.reverse()) await stopGroup(group);
    groups.length = 0;
    if (databaseCreated) await dropDatabase(settings.serverUrl, database);
    if (baselineDatabaseCreated) await dropDatabase(settings.serverUrl, baselineDatabase);
    databaseCreated = false;
    baselineDatabaseCreated = false;
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
    await addMinimalWriteKey(databaseUrl);
    const seed = { customerId: CUSTOMER, owned: 1_000, others: 20_000, seededAt: new Date() };
    const orderIds = await seedOrders(databaseUrl, seed);
    // A baseline from another commit gets a database of its own, migrated by its own migrations (a
    // later migration may drop what it uses), holding the same seeded orders.
    if (settings.baselineRef) {
      await createDatabase(settings.serverUrl, baselineDatabase);
      baselineDatabaseCreated = true;
      migrateDatabase(baseline.dir, baselineDatabaseUrl);
      await seedOrders(baselineDatabaseUrl, seed);
    }

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

    /** The service of `cwd` as its `start:prod` runs it (`command`), on the bench's node; the statement counter is always this checkout's. */
    const startService = (name, cwd, command, port, counterPort, env = {}) =>
      startGroup(name, node.path, [...command.nodeOptions, '-r', join(root, 'bench/count-statements.cjs'), command.entry], {
        cwd,
        env: {
          ...common,
          ...env,
          ...command.env,
          NODE_ENV: 'production',
          HOST: '127.0.0.1',
          PORT: String(port),
          PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
          LOG_LEVEL: 'info',
          BENCH_COUNTER_PORT: String(counterPort),
        },
        logFile: join(logDir, `${name}.log`),
      });
    const production = serviceCommand(root);
    const service = startService('service', root, production, servicePort, serviceCounterPort);
    groups.push(service);
    const baselineService =
      baseline &&
      startService('baseline', baseline.dir, baseline.command, baselinePort, baselineCounterPort, {
        DATABASE_URL: settings.baselineRef ? baselineDatabaseUrl : databaseUrl,
      });
    if (baselineService) groups.push(baselineService);
    const bare = startGroup('bare', node.path, ['-r', './bench/count-statements.cjs', 'bench/bare-server.mjs'], {
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
    const describe = (command) =>
      `${Object.entries(command.env)
        .map(([name, value]) => `${name}=${value} `)
        .join('')}node ${command.nodeOptions.join(' ')} ${command.entry}`;
    const runtime = {
      node: `${node.version} (${node.path}; ${node.note})`,
      service: describe(production),
      baseline: baseline && `${describe(baseline.command)} (${baseline.label})`,
    };
    process.stderr.write(
      `bench: database ${database}, logs in ${logDir}; paths ${settings.paths.join(', ')}; ${settings.warmupSeconds} s of warm-up per server ` +
        `and path, then ${settings.runs} × ${settings.durationSeconds} s alternating; PROVIDER_AGENT_HOURLY_LIMIT=${settings.agentHourlyLimit}\n` +
        `bench: node ${runtime.node}\nbench: service: ${runtime.service}\n` +
        (runtime.baseline ? `bench: baseline: ${runtime.baseline}\n` : ''),
    );
    const results = [];
    for (const path of PATHS.filter((candidate) => settings.paths.includes(candidate.key))) {
      const onPath = servers
        .filter((server) => path.servers.includes(server.name) || server.name === 'baseline')
        .filter((server) => settings.yardsticks || server.name === 'service' || server.name === 'baseline')
        .sort((a, b) => order(a.name) - order(b.name));
      results.push(...(await measurePath(path, onPath, token, orderIds)));
    }
    const services = servers.filter((server) => server.name === 'service' || server.name === 'baseline');
    const cold = settings.paths.includes('cold')
      ? await measureColdStart(
          services,
          servers.find((server) => server.name === 'bare'),
          token,
          orderIds,
        )
      : [];
    const memory = {
      servicePeakRssBytes: groupPeakRssBytes(service),
      barePeakRssBytes: groupPeakRssBytes(bare),
      baselinePeakRssBytes: baselineService && groupPeakRssBytes(baselineService),
    };
    const passed = printReport({ results, cold, memory, runtime, settings: { ...settings, baselineLabel: baseline?.label } });
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
