/** The Markdown table of `npm run bench` and its verdict against the goals of issue 12. */

const GOALS = {
  'GET /v1/orders/{id}': { throughput: 0.6, efficiency: 0.4 },
  'POST /v1/orders': { throughput: 0.5, efficiency: 0.33 },
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
    statementsPerRequest: perRequest('statements'),
    transactionsPerRequest: perRequest('transactions'),
  };
}

const whole = (value) => Math.round(value).toLocaleString('en-US');
const ratio = (value) => value.toFixed(2);
const oneDecimal = (value) => value.toFixed(1);
const verdict = (ok) => (ok ? 'PASS' : 'FAIL');

export function printReport({ results, memory, settings }) {
  const lines = [
    '| path | bare req/s | service req/s | ratio | p50 ms bare / service | p99 ms bare / service | CPU µs/req bare / service | efficiency | statements/req bare / service (transactions) |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const checks = [];
  const warnings = [];
  for (const [path, goal] of Object.entries(GOALS)) {
    const runs = results.filter((result) => result.path === path);
    const bare = aggregate(runs.filter((run) => run.server === 'bare'));
    const service = aggregate(runs.filter((run) => run.server === 'service'));
    const connections = runs[0]?.connections;
    const throughput = service.requestsPerSecond / bare.requestsPerSecond;
    const efficiency = bare.cpuMicrosPerRequest / service.cpuMicrosPerRequest;
    lines.push(
      `| \`${path}\`, ${connections} connections | ${whole(bare.requestsPerSecond)} | ${whole(service.requestsPerSecond)} | ${ratio(throughput)} | ` +
        `${oneDecimal(bare.p50)} / ${oneDecimal(service.p50)} | ${oneDecimal(bare.p99)} / ${oneDecimal(service.p99)} | ` +
        `${whole(bare.cpuMicrosPerRequest)} / ${whole(service.cpuMicrosPerRequest)} | ${ratio(efficiency)} | ` +
        `${oneDecimal(bare.statementsPerRequest)} (${oneDecimal(bare.transactionsPerRequest)}) / ` +
        `${oneDecimal(service.statementsPerRequest)} (${oneDecimal(service.transactionsPerRequest)}) |`,
    );
    checks.push(
      `${verdict(throughput >= goal.throughput)} ${path}: req/s ratio ${ratio(throughput)} (goal ≥ ${goal.throughput.toFixed(2)})`,
      `${verdict(efficiency >= goal.efficiency)} ${path}: CPU efficiency ${ratio(efficiency)} (goal ≥ ${goal.efficiency.toFixed(2)})`,
    );
    for (const [name, measured] of [
      ['bare', bare],
      ['service', service],
    ]) {
      if (measured.statementsPerRequest === 0) {
        warnings.push(`WARNING ${path}: the ${name} server sent no statement through pg: is it still on pg (bench/count-statements.cjs)?`);
      }
      if (measured.failed > 0)
        warnings.push(`WARNING ${path}: ${measured.failed} requests of the ${name} server failed (non-2xx, errors, timeouts)`);
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
      '',
    ].join('\n'),
  );
  return passed;
}
