import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RecordedRequest, RunningSandbox } from '../../src/sandbox/sandbox.server';
import { freePort } from './test-service';

const ROOT = resolve(__dirname, '../..');

export interface ChildService {
  child: ChildProcess;
  base: string;
  /** Everything the child printed so far, stdout and stderr together. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npm start`'s command: the TypeScript entry point. */
const TYPESCRIPT_ENTRY = ['-r', '@swc-node/register', 'src/main.ts'];

/**
 * The real entry point (`npm start`'s command, or `nodeArgs`) as a process of its own, on a free
 * port, returned once `readyPath` answers 2xx. The environment is only PATH, the given variables
 * and test defaults.
 */
export async function startChildService(
  env: Record<string, string>,
  options: { nodeArgs?: string[]; args?: string[]; readyPath?: string; startTimeoutMs?: number; port?: number } = {},
): Promise<ChildService> {
  // A port chosen beforehand lets another service name this one (its PUBLIC_BASE_URL) before it starts.
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [...(options.nodeArgs ?? TYPESCRIPT_ENTRY), ...(options.args ?? [])], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the child service exited (${child.exitCode}): ${output}`);
    const ready = await fetch(`${base}${options.readyPath ?? '/health/live'}`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) return { child, base, output: () => output, exited };
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the child service did not start: ${output}`);
    }
    await sleep(200);
  }
}

/** Resolves with the first pay-in the sandbox receives for `wallet`: the moment a request is in flight at the provider. */
export function payinReachesSandbox(sandbox: RunningSandbox, wallet: string): Promise<RecordedRequest> {
  return new Promise<RecordedRequest>((done) => {
    const listener = (recorded: RecordedRequest) => {
      if (recorded.path === '/api/agent/bills/v3' && (recorded.body as { wallet?: string })?.wallet === wallet) {
        sandbox.state.off('request', listener);
        done(recorded);
      }
    };
    sandbox.state.on('request', listener);
  });
}
