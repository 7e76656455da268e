import { fork, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type { ClientsRequest } from './live-streams-clients';

/**
 * Many live-stream clients in a child process (live-streams-clients.ts): the test's process then
 * holds the service's side alone, so what it measures (heap, statements) is the service's.
 */
export function startClientProcess() {
  const child: ChildProcess = fork(resolve(__dirname, 'live-streams-clients.ts'), [], {
    execArgv: ['-r', '@swc-node/register'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = <T>(request: ClientsRequest): Promise<T> =>
    new Promise((answer, fail) => {
      child.once('message', (reply: { ok: boolean; answer?: T; error?: string }) =>
        reply.ok ? answer(reply.answer as T) : fail(new Error(reply.error)),
      );
      child.send(request);
    });
  const waitAll = async (until: 'snapshot' | 'ended', timeoutMs = 60_000) => {
    if (!(await ask<boolean>({ cmd: 'waitAll', until, timeoutMs })))
      throw new Error(`not every client reached "${until}" in ${timeoutMs} ms`);
  };
  return { ask, waitAll, stop: () => child.kill() };
}
