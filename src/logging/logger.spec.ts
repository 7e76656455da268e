import { PassThrough } from 'node:stream';
import { createLogger, stdoutLogDestination } from './logger';
import { registerSecretValue } from './redaction';

function collect(stream: PassThrough): () => string {
  let text = '';
  stream.on('data', (chunk) => (text += chunk));
  return () => text;
}

async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('stdoutLogDestination', () => {
  it('pretty-prints on a terminal in development, after the secret scrubber', async () => {
    const secret = 'pretty-secret-value-never-printed';
    registerSecretValue(secret);
    const output = new PassThrough();
    const text = collect(output);
    const logger = createLogger('info', stdoutLogDestination({ isProduction: false, isTTY: true, prettyOutput: output }));

    logger.info({ providerAnswer: `denied for ${secret}` }, `token ${secret} refused`);
    await settle();

    expect(text()).toMatch(/INFO.*: token \[REDACTED\] refused/);
    expect(text()).toContain('providerAnswer: "denied for [REDACTED]"');
    expect(text()).not.toContain(secret);
    expect(text().trimStart().startsWith('{')).toBe(false);
  });

  it('writes JSON lines when stdout is not a terminal, and always in production', () => {
    const pretty = new PassThrough();
    for (const options of [
      { isProduction: false, isTTY: false },
      { isProduction: true, isTTY: true },
      { isProduction: true, isTTY: false },
    ]) {
      const destination = stdoutLogDestination({ ...options, prettyOutput: pretty });
      expect(destination.constructor.name).toBe('SonicBoom');
      expect((destination as unknown as { fd: number }).fd).toBe(1);
    }
  });
});
