import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SANDBOX_CREDENTIALS } from '../../src/config/development-defaults';

const ROOT = resolve(__dirname, '../..');

/**
 * An npm script of package.json as words: its environment assignments, then node's arguments
 * (options, entry and the entry's arguments). It must run node directly (`exec node …`: the shell npm
 * runs the script in becomes node, so a signal npm forwards reaches the service): what it runs is
 * what the tests run.
 */
export function nodeScriptCommand(script: string): { env: Record<string, string>; nodeArgs: string[] } {
  const scripts = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const words = scripts[script].trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const [name, ...value] = words.shift()!.split('=');
    env[name] = value.join('=');
  }
  if (words[0] === 'exec') words.shift();
  if (words.shift() !== 'node') throw new Error(`${script} must run node directly: ${scripts[script]}`);
  return { env, nodeArgs: words };
}

/** `npm run start:prod` as words: what the image's CMD runs too. */
export function startProdCommand(): { env: Record<string, string>; nodeArgs: string[] } {
  return nodeScriptCommand('start:prod');
}

/**
 * The environment of an instance run as `start:prod` runs it (its assignments), in production mode
 * on 127.0.0.1, on `databaseUrl` (migrated beforehand: start:prod never migrates), paying in at the
 * sandbox of `providerBaseUrl` with its credentials, and trusting tokens signed with `jwtSecret`.
 */
export function startProdEnvironment(options: { databaseUrl: string; providerBaseUrl: string; jwtSecret: string }): Record<string, string> {
  return {
    ...startProdCommand().env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    DATABASE_URL: options.databaseUrl,
    PROVIDER_BASE_URL: options.providerBaseUrl,
    PROVIDER_API_KEY: SANDBOX_CREDENTIALS.apiKey,
    PROVIDER_SECRET_KEY: SANDBOX_CREDENTIALS.secretKey,
    PROVIDER_SP_AUTH_TOKEN: SANDBOX_CREDENTIALS.spAuthToken,
    CALLBACK_SIGNING_SECRET: 'c'.repeat(48),
    DATA_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
    AUTH_JWT_SECRET: options.jwtSecret,
  };
}
