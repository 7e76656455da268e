/**
 * The Markdown table of `npm run bench` and its verdict against the goals of issue 38: the read
 * against the bare server, the write against the bare server's minimal write, the service's peak
 * RSS, and its cold start after an idle minute. PostgreSQL's CPU and the server's and PostgreSQL's
 * together are printed beside each ratio as INFO; so is the bare server's full write
 * (BENCH_FULL_WRITE=1). With a baseline (BENCH_BASELINE, BENCH_BASELINE_ENTRY,
 * BENCH_BASELINE_NODE_OPTIONS), the service against it on each path: BASELINE lines, not counted.
 */
import { percentile } from './mixed-client.mjs';

/** `against`: the yardstick's runs on the path ("minimal": the bare server's minimal write). */
const GOALS = [
  { path: 'GET /v1/orders/{id}', against: 'bare', throughput: 0.7, efficiency: 0.55 },
  { path: 'POST /v1/orders', against: 'minimal', throughput: 0.5, efficiency: 0.4 },
];
/** The former write goals, against the bare server's full write: INFO when it is measured. */
const INFOS = [{ path: 'POST /v1/orders', against: 'bare', throughput: 0.5, efficiency: 0.33 }];
const PEAK_RSS_GOAL_BYTES = 175 * 1024 * 1024;
/** The cold-start goal: the first requests' p99 at most this many times the settled p99. */
const COLD_P99_FACTOR = 2;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** Every run of one server on one path: the median run of each measure (the runs alternated with the other servers'). */
function aggregate(runs) {
  // Costs are divided by the responses the server finished, in-flight ones at the end of a run included.
  const perRequest = (run, field) => run[field] / Math.max(1, run.responses);
  const of = (measure) => median(runs.map(measure));
  return {
    runs: runs.length,
    requestsPerSecond: of((run) => run.completed / run.seconds),
    failed: runs.reduce((sum, run) => sum + run.failed, 0),
    p50: of((run) => run.p50),
    p99: of((run) => run.p99),
    cpuMicrosPerRequest: of((run) => perRequest(run, 'cpuMicros')),
    // PostgreSQL's CPU (bench/processes.mjs postgresCpuMicros): undefined when it could not be read.
    databaseCpuMicrosPerRequest: runs.every((run) => run.databaseCpuMicros !== undefined)
      ? of((run) => perRequest(run, 'databaseCpuMicros'))
      : undefined,
    statementsPerRequest: of((run) => perRequest(run, 'statements')),
    transactionsPerRequest: of((run) => perRequest(run, 'transactions')),
  };
}

const whole = (value) => Math.round(value).toLocaleString('en-US');
const ratio = (value) => value.toFixed(2);
const oneDecimal = (value) => value.toFixed(1);
const megabytes = (bytes) => `${oneDecimal(bytes / 1024 / 1024)} MB`;
const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
const orUnknown = (value, format) => (value === undefined ? 'n/a' : format(value));
const yardstick = (name) => ({ bare: 'bare', minimal: 'minimal write', baseline: 'baseline' })[name];

export function printReport({ results, cold, memory, runtime, settings }) {
  const lines = [
    '| path | against | req/s against / service | ratio | p50 ms | p99 ms | CPU µs/req | CPU efficiency | PostgreSQL CPU µs/req | statements/req (transactions) |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const checks = [];
  const warnings = [];
  const infos = [];
  const measured = (path, server) => results.some((result) => result.path === path && result.server === server);
  /** One table row: the service against `against` on `path` (medians of the runs), its warnings, the ratios. */
  const compare = (path, against) => {
    const runs = results.filter((result) => result.path === path);
    const other = aggregate(runs.filter((run) => run.server === against));
    const service = aggregate(runs.filter((run) => run.server === 'service'));
    const throughput = service.requestsPerSecond / other.requestsPerSecond;
    const efficiency = other.cpuMicrosPerRequest / service.cpuMicrosPerRequest;
    const pair = (field, format) => `${format(other[field])} / ${format(service[field])}`;
    lines.push(
      `| \`${path}\`, ${runs[0]?.connections} connections | ${yardstick(against)} | ${pair('requestsPerSecond', whole)} | ${ratio(throughput)} | ` +
        `${pair('p50', oneDecimal)} | ${pair('p99', oneDecimal)} | ${pair('cpuMicrosPerRequest', whole)} | ${ratio(efficiency)} | ` +
        `${orUnknown(other.databaseCpuMicrosPerRequest, whole)} / ${orUnknown(service.databaseCpuMicrosPerRequest, whole)} | ` +
        `${oneDecimal(other.statementsPerRequest)} (${oneDecimal(other.transactionsPerRequest)}) / ` +
        `${oneDecimal(service.statementsPerRequest)} (${oneDecimal(service.transactionsPerRequest)}) |`,
    );
    for (const [name, of] of [
      [against, other],
      ['service', service],
    ]) {
      if (of.statementsPerRequest === 0) {
        warnings.push(`WARNING ${path}: the ${name} server sent no statement through pg: is it still on pg (bench/count-statements.cjs)?`);
      }
      if (of.failed > 0) warnings.push(`WARNING ${path}: ${of.failed} requests of the ${name} server failed (non-2xx, errors, timeouts)`);
    }
    // The database's side of the same comparison, and both processes together: information, not goals.
    if (other.databaseCpuMicrosPerRequest !== undefined && service.databaseCpuMicrosPerRequest !== undefined) {
      const together = (of) => of.cpuMicrosPerRequest + of.databaseCpuMicrosPerRequest;
      infos.push(
        `INFO ${path} vs ${yardstick(against)}: PostgreSQL's CPU ${whole(other.databaseCpuMicrosPerRequest)} / ${whole(service.databaseCpuMicrosPerRequest)} µs per request ` +
          `(efficiency ${ratio(other.databaseCpuMicrosPerRequest / service.databaseCpuMicrosPerRequest)}); ` +
          `server and PostgreSQL together ${whole(together(other))} / ${whole(together(service))} µs (efficiency ${ratio(together(other) / together(service))})`,
      );
    }
    return { throughput, efficiency };
  };
  for (const goal of GOALS) {
    if (!measured(goal.path, goal.against)) continue;
    const { throughput, efficiency } = compare(goal.path, goal.against);
    const label = `${goal.path} vs ${yardstick(goal.against)}`;
    checks.push(
      `${verdict(throughput >= goal.throughput)} ${label}: req/s ratio ${ratio(throughput)} (goal ≥ ${goal.throughput.toFixed(2)})`,
      `${verdict(efficiency >= goal.efficiency)} ${label}: CPU efficiency ${ratio(efficiency)} (goal ≥ ${goal.efficiency.toFixed(2)})`,
    );
  }
  for (const info of INFOS) {
    if (!measured(info.path, info.against)) continue;
    const { throughput, efficiency } = compare(info.path, info.against);
    infos.push(
      `INFO ${info.path} vs ${yardstick(info.against)}'s full write: req/s ratio ${ratio(throughput)} (former goal ≥ ${info.throughput.toFixed(2)}), ` +
        `CPU efficiency ${ratio(efficiency)} (former goal ≥ ${info.efficiency.toFixed(2)})`,
    );
  }
  // A baseline: the service against another build or start of itself, path by path, in the same run.
  const baselines = [];
  for (const path of [...new Set(results.map((result) => result.path))]) {
    if (!measured(path, 'baseline')) continue;
    const { throughput, efficiency } = compare(path, 'baseline');
    baselines.push(
      `BASELINE ${path}: req/s ${ratio(throughput)} and CPU efficiency ${ratio(efficiency)} of the baseline's (${settings.baselineLabel}; above 1.00: the service does better)`,
    );
  }

  const coldLines = [];
  for (const { server, settled, first, idleRssBytes } of cold) {
    const settledP99 = percentile(settled.latencies, 0.99);
    const firstP99 = percentile(first.latencies, 0.99);
    const limit = COLD_P99_FACTOR * settledP99;
    coldLines.push(
      `| ${server} | ${settled.latencies.length} | ${oneDecimal(percentile(settled.latencies, 0.5))} | ${oneDecimal(settledP99)} | ` +
        `${first.latencies.length} | ${oneDecimal(percentile(first.latencies, 0.5))} | ${oneDecimal(firstP99)} | ` +
        `${oneDecimal(Math.max(...first.latencies))} | ${oneDecimal(first.latencies[0])} | ` +
        `${whole(settled.cpuMicrosPerRequest)} / ${whole(first.cpuMicrosPerRequest)} | ${megabytes(idleRssBytes)} |`,
    );
    if (settled.failed + first.failed > 0)
      warnings.push(`WARNING cold start: ${settled.failed + first.failed} requests of the ${server} failed`);
    const rule =
      `cold start: the first ${first.latencies.length} requests' p99 ${oneDecimal(firstP99)} ms ≤ ${COLD_P99_FACTOR} × the settled p99 ` +
      `${oneDecimal(settledP99)} ms = ${oneDecimal(limit)} ms (nearest-rank p99, same mix, ${settings.cold.concurrency} at a time)`;
    if (server === 'service') checks.push(`${verdict(firstP99 <= limit)} ${rule}`);
    else baselines.push(`BASELINE ${server} ${rule}: ${firstP99 <= limit ? 'met' : 'not met'}`);
  }

  checks.push(
    `${verdict(memory.servicePeakRssBytes < PEAK_RSS_GOAL_BYTES)} service peak RSS ${megabytes(memory.servicePeakRssBytes)} (goal < ${megabytes(PEAK_RSS_GOAL_BYTES)})`,
  );
  const passed = checks.every((check) => check.startsWith('PASS'));
  const { cold: coldSettings } = settings;

  process.stdout.write(
    [
      '',
      `Node.js ${runtime.node}`,
      `service: ${runtime.service}`,
      ...(runtime.baseline ? [`baseline: ${runtime.baseline}`] : []),
      '',
      ...(results.length > 0
        ? [
            ...lines,
            '',
            `Columns "against / service"; each value the median of ${settings.runs} run(s) of ${settings.durationSeconds} s per server and path, ` +
              `alternating per run, after ${settings.warmupSeconds} s of warm-up per server and path; PROVIDER_AGENT_HOURLY_LIMIT=${settings.agentHourlyLimit} for both.`,
            '',
          ]
        : []),
      ...(coldLines.length > 0
        ? [
            `Cold start: ${coldSettings.settledRequests} requests of the mix (1 pay-in, 3 reads) settled, right after the runs; then ${coldSettings.idleSeconds} s ` +
              `without a request; then the first ${coldSettings.requests} of the same mix on new connections, ${coldSettings.concurrency} at a time.`,
            '',
            '| server | settled requests | settled p50 ms | settled p99 ms | first requests | first p50 ms | first p99 ms | first max ms | very first ms | CPU µs/req settled / first | RSS after the idle time |',
            '|---|---|---|---|---|---|---|---|---|---|---|',
            ...coldLines,
            '',
          ]
        : []),
      `Peak RSS: service ${megabytes(memory.servicePeakRssBytes)}, bare ${megabytes(memory.barePeakRssBytes)}` +
        (memory.baselinePeakRssBytes ? `, baseline ${megabytes(memory.baselinePeakRssBytes)}` : '') +
        '.',
      '',
      ...checks,
      ...warnings,
      passed ? 'All goals met.' : 'Some goals are not met.',
      ...(infos.length > 0 ? ['', ...infos, 'INFO lines are information: they change neither the verdict nor the exit code.'] : []),
      ...(baselines.length > 0 ? ['', ...baselines] : []),
      '',
    ].join('\n'),
  );
  return passed;
}
