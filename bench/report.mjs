/**
 * The Markdown table of `npm run bench` and its verdict against the goals of issue 12, then the
 * service's `POST /v1/orders` against the bare server's minimal write, with the targets of the issue
 * "One shape": printed as INFO lines, not counted in the verdict (nor by BENCH_STRICT). With
 * BENCH_BASELINE, the service against the baseline build on each path: BASELINE lines, not counted either.
 */

const GOALS = {
  'GET /v1/orders/{id}': { throughput: 0.6, efficiency: 0.4 },
  'POST /v1/orders': { throughput: 0.5, efficiency: 0.33 },
};
const TARGETS = {
  'POST /v1/orders vs minimal write': { path: 'POST /v1/orders', against: 'minimal', throughput: 0.5, efficiency: 0.4 },
};
const PEAK_RSS_GOAL_BYTES = 200 * 1024 * 1024;

/** Every run of one server on one path, added up: rates over the summed time, costs over the summed requests. */
function aggregate(runs) {
  const completed = runs.reduce((sum, run) => sum + run.completed, 0);
  const responses = runs.reduce((sum, run) => sum + run.responses, 0);
  const seconds = runs.reduce((sum, run) => sum + run.seconds, 0);
  const mean = (field) => runs.reduce((sum, run) => sum + run[field], 0) / runs.length;
  // Costs are divided by the responses the server finished, in-flight ones at the end of a run included.
  const perRequest = (field) => runs.reduce((sum, run) => sum + run[field], 0) / Math.max(1, responses);
  return {
    requestsPerSecond: completed / seconds,
    failed: runs.reduce((sum, run) => sum + run.failed, 0),
    p50: mean('p50'),
    p99: mean('p99'),
    cpuMicrosPerRequest: perRequest('cpuMicros'),
    // PostgreSQL's CPU (bench/processes.mjs postgresCpuMicros): undefined when it could not be read.
    databaseCpuMicrosPerRequest: runs.every((run) => run.databaseCpuMicros !== undefined) ? perRequest('databaseCpuMicros') : undefined,
    statementsPerRequest: perRequest('statements'),
    transactionsPerRequest: perRequest('transactions'),
  };
}

const whole = (value) => Math.round(value).toLocaleString('en-US');
const ratio = (value) => value.toFixed(2);
const oneDecimal = (value) => value.toFixed(1);
const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
const orUnknown = (value, format) => (value === undefined ? 'n/a' : format(value));

export function printReport({ results, memory, settings }) {
  const lines = [
    '| path | bare req/s | service req/s | ratio | p50 ms bare / service | p99 ms bare / service | CPU µs/req bare / service | efficiency | PostgreSQL CPU µs/req bare / service | statements/req bare / service (transactions) |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const checks = [];
  const warnings = [];
  const infos = [];
  /** One table row: the service against `against` on `path`; the warnings of `warnFor`; the two ratios. */
  const compare = (label, path, against, warnFor = [against, 'service']) => {
    const runs = results.filter((result) => result.path === path);
    const baseline = aggregate(runs.filter((run) => run.server === against));
    const service = aggregate(runs.filter((run) => run.server === 'service'));
    const connections = runs[0]?.connections;
    const throughput = service.requestsPerSecond / baseline.requestsPerSecond;
    const efficiency = baseline.cpuMicrosPerRequest / service.cpuMicrosPerRequest;
    lines.push(
      `| \`${path}\`${label === path ? '' : label.slice(path.length)}, ${connections} connections | ${whole(baseline.requestsPerSecond)} | ${whole(service.requestsPerSecond)} | ${ratio(throughput)} | ` +
        `${oneDecimal(baseline.p50)} / ${oneDecimal(service.p50)} | ${oneDecimal(baseline.p99)} / ${oneDecimal(service.p99)} | ` +
        `${whole(baseline.cpuMicrosPerRequest)} / ${whole(service.cpuMicrosPerRequest)} | ${ratio(efficiency)} | ` +
        `${orUnknown(baseline.databaseCpuMicrosPerRequest, whole)} / ${orUnknown(service.databaseCpuMicrosPerRequest, whole)} | ` +
        `${oneDecimal(baseline.statementsPerRequest)} (${oneDecimal(baseline.transactionsPerRequest)}) / ` +
        `${oneDecimal(service.statementsPerRequest)} (${oneDecimal(service.transactionsPerRequest)}) |`,
    );
    for (const [name, measured] of [
      [against, baseline],
      ['service', service],
    ].filter(([name]) => warnFor.includes(name))) {
      if (measured.statementsPerRequest === 0) {
        warnings.push(`WARNING ${label}: the ${name} server sent no statement through pg: is it still on pg (bench/count-statements.cjs)?`);
      }
      if (measured.failed > 0)
        warnings.push(`WARNING ${label}: ${measured.failed} requests of the ${name} server failed (non-2xx, errors, timeouts)`);
    }
    return { throughput, efficiency, baseline, service };
  };
  for (const [path, goal] of Object.entries(GOALS)) {
    const { throughput, efficiency } = compare(path, path, 'bare');
    checks.push(
      `${verdict(throughput >= goal.throughput)} ${path}: req/s ratio ${ratio(throughput)} (goal ≥ ${goal.throughput.toFixed(2)})`,
      `${verdict(efficiency >= goal.efficiency)} ${path}: CPU efficiency ${ratio(efficiency)} (goal ≥ ${goal.efficiency.toFixed(2)})`,
    );
  }
  for (const [label, target] of Object.entries(TARGETS)) {
    if (!results.some((result) => result.path === target.path && result.server === target.against)) continue;
    const { throughput, efficiency, baseline, service } = compare(label, target.path, target.against, [target.against]);
    const met = (ok) => (ok ? 'INFO TARGET MET' : 'INFO TARGET NOT MET');
    infos.push(
      `${met(throughput >= target.throughput)} ${label}: req/s ratio ${ratio(throughput)} (target ≥ ${target.throughput.toFixed(2)})`,
      `${met(efficiency >= target.efficiency)} ${label}: CPU efficiency ${ratio(efficiency)} (target ≥ ${target.efficiency.toFixed(2)})`,
    );
    // The database's side of the same comparison: its CPU per request, and both processes' together.
    if (baseline.databaseCpuMicrosPerRequest !== undefined && service.databaseCpuMicrosPerRequest !== undefined) {
      const together = (measured) => measured.cpuMicrosPerRequest + measured.databaseCpuMicrosPerRequest;
      infos.push(
        `INFO ${label}: PostgreSQL's CPU ${whole(baseline.databaseCpuMicrosPerRequest)} / ${whole(service.databaseCpuMicrosPerRequest)} µs per request ` +
          `(efficiency ${ratio(baseline.databaseCpuMicrosPerRequest / service.databaseCpuMicrosPerRequest)}); ` +
          `server and PostgreSQL together ${whole(together(baseline))} / ${whole(together(service))} µs (efficiency ${ratio(together(baseline) / together(service))})`,
      );
    }
  }
  // BENCH_BASELINE: the service against itself as it was, path by path, in the same run ("bare" columns: the baseline's).
  const baselines = [];
  if (settings.baselineRef) {
    for (const path of [...new Set(results.map((result) => result.path))]) {
      const { throughput, efficiency } = compare(`${path} vs baseline ${settings.baselineRef}`, path, 'baseline', ['baseline']);
      baselines.push(
        `BASELINE ${path}: req/s ${ratio(throughput)} and CPU efficiency ${ratio(efficiency)} of the baseline's (above 1.00: better than ${settings.baselineRef})`,
      );
    }
  }
  const serviceRssMb = memory.servicePeakRssBytes / 1024 / 1024;
  checks.push(
    `${verdict(memory.servicePeakRssBytes < PEAK_RSS_GOAL_BYTES)} service peak RSS ${oneDecimal(serviceRssMb)} MB (goal < 200 MB)`,
  );
  const passed = checks.every((check) => check.startsWith('PASS'));

  process.stdout.write(
    [
      '',
      ...lines,
      '',
      `Peak RSS: service ${oneDecimal(serviceRssMb)} MB, bare ${oneDecimal(memory.barePeakRssBytes / 1024 / 1024)} MB. ` +
        `${settings.runs} runs of ${settings.durationSeconds} s per server and path, alternating, after ${settings.warmupSeconds} s of warm-up; ` +
        `PROVIDER_AGENT_HOURLY_LIMIT=${settings.agentHourlyLimit} for both.`,
      '',
      ...checks,
      ...warnings,
      passed ? 'All goals met.' : 'Some goals are not met.',
      ...(infos.length > 0 ? ['', ...infos, 'The targets are not goals yet: they do not change the verdict nor the exit code.'] : []),
      ...(baselines.length > 0 ? ['', ...baselines] : []),
      '',
    ].join('\n'),
  );
  return passed;
}
