/**
 * The provider sandbox for `npm run bench`, in its own process (its CPU is counted for neither
 * server): `node -r @swc-node/register bench/sandbox.cjs`, listening on 127.0.0.1:$BENCH_SANDBOX_PORT.
 * Two differences from `npm run sandbox`, both so that the fake stays a constant, negligible cost:
 * - no provider rate limit: the sandbox keeps every /api/agent hit of the hour in an array it
 *   filters on each request, which would make a long run slower and slower (the servers' own
 *   budgets are still counted, against PROVIDER_AGENT_HOURLY_LIMIT);
 * - the recorded requests are dropped every second (the bench never reads them).
 * The bench pays in from the NO_CALLBACK wallet: answered PROCESSING at once, never called back.
 */
const { startSandbox } = require('../src/sandbox/sandbox.server');

async function main() {
  const sandbox = await startSandbox({ port: Number(process.env.BENCH_SANDBOX_PORT), host: '127.0.0.1' });
  sandbox.state.admitAgentRequest = () => ({ allowed: true, retryAfterSeconds: 0 });
  setInterval(() => sandbox.state.reset(), 1_000).unref();
  process.stdout.write(`sandbox ready on ${sandbox.url}\n`);
  const stop = () => {
    sandbox.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => {
  process.stderr.write(`bench sandbox: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
