import { loadDotEnvIfPresent } from '../config/app-config';
import { loadSandboxCliConfig } from '../config/sandbox-cli-config';
import { SANDBOX_DEFAULTS, startSandbox } from './sandbox.server';
import { TEST_WALLET_LIST } from './test-wallets';

async function main(): Promise<void> {
  // Like every other entry point: SANDBOX_* in a local .env count (.env.example lists them).
  loadDotEnvIfPresent();
  let settings;
  try {
    settings = loadSandboxCliConfig();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  const { verbose } = settings;
  const sandbox = await startSandbox({
    port: settings.port,
    host: settings.host,
    logger: (msg, data) => {
      if (verbose) console.log(`[sandbox] ${msg}`, data ? JSON.stringify(data) : '');
    },
  });

  console.log(`Provider sandbox listening on ${sandbox.url}`);
  console.log(`  PROVIDER_BASE_URL=${sandbox.url}`);
  console.log(`  public_apikey / x-api-key : ${SANDBOX_DEFAULTS.apiKey}`);
  console.log(`  private_secretkey         : ${SANDBOX_DEFAULTS.secretKey}`);
  console.log(`  x-sp-auth-token           : ${SANDBOX_DEFAULTS.spAuthToken}`);
  console.log('Test wallets (pay-in `wallet` field):');
  for (const w of TEST_WALLET_LIST) console.log(`  ${w.wallet}  ${w.name.padEnd(22)} ${w.description}`);
  console.log('  any other wallet          accepted, then successUrl is called');
  console.log(`Recorded requests: ${sandbox.url}/__sandbox/requests   callbacks: ${sandbox.url}/__sandbox/callbacks`);
  console.log('Set SANDBOX_VERBOSE=1 to log every event. Ctrl+C to stop.');

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal} received, stopping the sandbox`);
    sandbox.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('sandbox: error while closing', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error('sandbox: failed to start', err);
  process.exit(1);
});
