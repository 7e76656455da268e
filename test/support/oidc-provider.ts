import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';

export interface RunningOidcProvider {
  /** `http://127.0.0.1:<port>`: the issuer, on a loopback address (where http:// is accepted). */
  issuer: string;
  close(): Promise<void>;
}

/** The accounts of test/support/oidc-provider-server.mjs, with their passwords. */
export const OIDC_ACCOUNTS = {
  finance: { username: 'fiona', password: 'fiona-password' },
  admin: { username: 'ada', password: 'ada-password' },
  /** A finance account whose every access token has already expired when it is issued. */
  expiredTokens: { username: 'ernest', password: 'ernest-password' },
} as const;

/**
 * Starts a real OpenID Connect provider (oidc-provider, ESM-only, so in a child process of its
 * own: test/support/oidc-provider-server.mjs) with one public client (PKCE) and JWT access tokens
 * for `audience` that carry the roles at `realm_access.roles`.
 */
export async function startOidcProvider(options: {
  clientId: string;
  redirectUris: string[];
  audience: string;
}): Promise<RunningOidcProvider> {
  const child = spawn(process.execPath, [resolve(__dirname, 'oidc-provider-server.mjs')], {
    env: {
      ...process.env,
      OIDC_CLIENT_ID: options.clientId,
      OIDC_REDIRECT_URIS: options.redirectUris.join(','),
      OIDC_AUDIENCE: options.audience,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const issuer = await new Promise<string>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`the OpenID Connect provider did not start within 20 s: ${stderr}`)), 20_000);
    child.once('exit', (code) => fail(new Error(`the OpenID Connect provider exited (${code}) before listening: ${stderr}`)));
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      ready((JSON.parse(line) as { issuer: string }).issuer);
    });
  });
  return {
    issuer,
    close: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
