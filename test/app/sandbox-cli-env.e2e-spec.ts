import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

describe('npm run sandbox reads a local .env, like the other entry points', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'sandbox-cli-env-'));
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it('listens on the SANDBOX_PORT of the .env in its working directory', async () => {
    const port = await freePort();
    writeFileSync(join(workDir, '.env'), `SANDBOX_PORT=${port}\nSANDBOX_HOST=127.0.0.1\n`);
    const env: NodeJS.ProcessEnv = { ...process.env, SWC_NODE_PROJECT: join(ROOT, 'tsconfig.json') };
    delete env.SANDBOX_PORT;
    delete env.SANDBOX_HOST;
    const child = spawn(
      process.execPath,
      ['-r', require.resolve('@swc-node/register', { paths: [ROOT] }), join(ROOT, 'src/sandbox/sandbox.cli.ts')],
      { cwd: workDir, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    let output = '';
    try {
      const firstLine = await new Promise<string>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`no listening line within 20 s; output so far: ${output}`)), 20_000);
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          const line = output.split('\n').find((l) => l.startsWith('Provider sandbox listening on '));
          if (line === undefined) return;
          clearTimeout(timer);
          done(line);
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        void exited.then((code) => fail(new Error(`the sandbox exited with ${code}: ${output}`)));
      });
      expect(firstLine).toBe(`Provider sandbox listening on http://127.0.0.1:${port}`);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 30_000);
});
