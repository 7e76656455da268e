import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/**
 * `npm run start:prod` as words: its environment assignments, then node's arguments (options and
 * entry). It must run node directly: what it runs is what the image's CMD and the tests run.
 */
export function startProdCommand(): { env: Record<string, string>; nodeArgs: string[] } {
  const scripts = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const words = scripts['start:prod'].trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const [name, ...value] = words.shift()!.split('=');
    env[name] = value.join('=');
  }
  if (words.shift() !== 'node') throw new Error(`start:prod must run node directly: ${scripts['start:prod']}`);
  return { env, nodeArgs: words };
}
