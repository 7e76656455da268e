import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const BENCH = resolve(ROOT, 'bench');

/**
 * The benches read some of the service's own modules from the build (`require('../dist/….js')`:
 * `npm run bench:scale` explains the plans of the list statements the service runs). No test runs
 * a bench, so a renamed export broke `bench:scale` after a minute of seeding without anyone
 * noticing; here every name a bench takes from the build must be exported by the module it names.
 */
describe('the names the benches take from the build', () => {
  const taken = readdirSync(BENCH)
    .filter((file) => /\.(mjs|cjs|js)$/.test(file))
    .flatMap((file) =>
      [...readFileSync(resolve(BENCH, file), 'utf8').matchAll(/const \{([^}]+)\} = \w+(?:\([^)]*\))?\('\.\.\/dist\/([^']+)\.js'\)/g)].map(
        ([, names, module]) => ({ file, module, names: names.split(',').map((name) => name.trim().split(':')[0].trim()) }),
      ),
    );

  it('finds the imports it checks', () => {
    expect(taken.map(({ file, module }) => `${file} ${module}`)).toEqual(
      expect.arrayContaining(['scale-lists.mjs orders/orders.statements', 'scale-lists.mjs database/list-queries']),
    );
  });

  it.each(taken.map((entry) => [entry.file, entry.module, entry]))('%s: what it takes from dist/%s is exported', (_file, module, entry) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module the build turns into dist/<module>.js
    const exported = require(resolve(ROOT, 'src', `${module}.ts`)) as Record<string, unknown>;
    expect(entry.names.filter((name) => exported[name] === undefined)).toEqual([]);
  });
});
