import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

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
