import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** Runs the real entry point (`npm start`'s command) and collects what it prints. */
function runMain(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', 'src/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

const COMPLETE_PRODUCTION_ENV = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgresql://bff@127.0.0.1:1/bff',
  PROVIDER_BASE_URL: 'https://api.provider.example',
  PROVIDER_API_KEY: 'live-key',
  PROVIDER_SECRET_KEY: 'live-secret-never-printed',
  PROVIDER_SP_AUTH_TOKEN: 'live-sp-token',
  PUBLIC_BASE_URL: 'https://pay.merchant.example',
  CALLBACK_SIGNING_SECRET: 'c'.repeat(48),
  DATA_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
  AUTH_JWT_SECRET: 'j'.repeat(48),
};

describe('start-up with bad configuration', () => {
  it('refuses to start in production with a missing variable, naming it, without a stack trace', async () => {
    const { PROVIDER_SP_AUTH_TOKEN: _missing, DATA_ENCRYPTION_KEY: _alsoMissing, ...env } = COMPLETE_PRODUCTION_ENV;
    const result = await runMain(env);
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('PROVIDER_SP_AUTH_TOKEN is required in production');
    expect(result.stderr).toContain('DATA_ENCRYPTION_KEY is required in production');
    expect(result.stderr).not.toMatch(/\n[ \t]+at /);
    expect(result.stderr + result.stdout).not.toContain('live-secret-never-printed');
  });

  it('refuses to start in production with a malformed previous key, or one equal to the current key, naming the variable and position, never the value', async () => {
    const result = await runMain({
      ...COMPLETE_PRODUCTION_ENV,
      DATA_ENCRYPTION_PREVIOUS_KEYS: `${Buffer.alloc(32, 2).toString('base64')},not-a-key-never-printed`,
      AUTH_JWT_PREVIOUS_SECRETS: COMPLETE_PRODUCTION_ENV.AUTH_JWT_SECRET,
    });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('DATA_ENCRYPTION_PREVIOUS_KEYS entry 2 must be 32 bytes encoded in base64');
    expect(result.stderr).toContain('AUTH_JWT_PREVIOUS_SECRETS entry 1 equals the current key');
    expect(result.stderr + result.stdout).not.toContain('not-a-key-never-printed');
    expect(result.stderr + result.stdout).not.toContain(COMPLETE_PRODUCTION_ENV.AUTH_JWT_SECRET);
  });

  it('refuses an OTLP protocol it does not export in (gRPC), with the other problems, instead of sending every span where nothing reads it', async () => {
    const result = await runMain({
      PORT: 'eighty',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('PORT must be an integer');
    expect(result.stderr).toContain('OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (got "grpc")');
    expect(result.stderr).not.toMatch(/\n[ \t]+at /);
  });

  it('refuses an invalid value in development too, with a clear message', async () => {
    const result = await runMain({ PORT: 'eighty', LOG_LEVEL: 'loud' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('PORT must be an integer');
    expect(result.stderr).toContain('LOG_LEVEL must be one of');
    expect(result.stderr).not.toMatch(/\n[ \t]+at /);
  });
});
