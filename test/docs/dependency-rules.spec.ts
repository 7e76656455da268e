import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * `npm run lint:deps` (.dependency-cruiser.cjs) run on copies of src/: the untouched copy passes, and
 * a copy that breaks a rule fails, naming the rule and the files. The copies are made in a temporary
 * folder (with the repository's tsconfig.json and package.json, and its node_modules linked), so the
 * same script runs there as in `npm run check`.
 */
const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);
const copies: string[] = [];

function copyOfRepository(extraFiles: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'dependency-rules-'));
  copies.push(dir);
  cpSync(join(ROOT, 'src'), join(dir, 'src'), { recursive: true });
  for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json']) cpSync(join(ROOT, file), join(dir, file));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const [path, text] of Object.entries(extraFiles)) writeFileSync(join(dir, path), text);
  return dir;
}

async function lintDeps(dir: string): Promise<{ failed: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'lint:deps'], { cwd: dir, timeout: 60_000 });
    return { failed: false, output: stdout + stderr };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { failed: true, output: stdout + stderr };
  }
}

/** The violations of one rule, as dependency-cruiser's `err` output lists them: "error <rule>: <from> → <to> …". */
function violations(output: string, rule: string): string[] {
  return output
    .split(/\n(?=[ \t]*error )/)
    .filter((block) => block.includes(`error ${rule}:`))
    .map((block) => block.replace(/\s+/g, ' ').trim());
}

afterAll(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

describe('dependency rules (npm run lint:deps)', () => {
  it('is what npm run check runs', () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['lint:deps']).toContain('.dependency-cruiser.cjs');
    expect(scripts.check).toContain('npm run lint:deps');
  });

  it('passes on the untouched src/', async () => {
    const { failed, output } = await lintDeps(copyOfRepository());
    expect({ failed, output }).toEqual({ failed: false, output: expect.stringContaining('no dependency violations found') });
  });

  it('fails on two files that import each other (a type-only import counts) and on common importing a feature', async () => {
    const { failed, output } = await lintDeps(
      copyOfRepository({
        'src/orders/cycle-one.ts': "import type { Two } from './cycle-two';\nexport interface One { two?: Two }\n",
        'src/orders/cycle-two.ts': "import type { One } from './cycle-one';\nexport interface Two { one?: One }\n",
        'src/common/reaches-out.ts': "export { OrdersService } from '../orders/orders.service';\n",
      }),
    );
    expect(failed).toBe(true);
    expect(violations(output, 'no-file-cycles')).toEqual([
      expect.stringMatching(/src\/orders\/cycle-(one|two)\.ts → src\/orders\/cycle-(one|two)\.ts → src\/orders\/cycle-(one|two)\.ts/),
    ]);
    expect(violations(output, 'common-depends-on-nothing-of-ours')).toEqual([
      expect.stringContaining('src/common/reaches-out.ts → src/orders/orders.service.ts'),
    ]);
    // orders already depends on common: the new import closes a cycle of folders too.
    expect(violations(output, 'no-folder-cycles')).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/src\/common → .*src\/orders → .*src\/common|src\/orders → .*src\/common → .*src\/orders/),
      ]),
    );
  });

  it('fails on a cycle of folders without a cycle of files, and on callbacks going around the orders port', async () => {
    const { failed, output } = await lintDeps(
      copyOfRepository({
        // orders imports auth (the guard, the roles): auth importing orders closes a cycle of folders only.
        'src/auth/order-statuses.ts': "export { ORDER_STATUSES } from '../orders/order.types';\n",
        'src/callbacks/around-the-port.ts': "export type { OrdersRepository } from '../orders/orders.repository';\n",
      }),
    );
    expect(failed).toBe(true);
    expect(violations(output, 'no-file-cycles')).toEqual([]);
    expect(violations(output, 'no-folder-cycles')).toEqual(
      expect.arrayContaining([expect.stringMatching(/src\/auth → src\/orders → src\/auth|src\/orders → src\/auth → src\/orders/)]),
    );
    expect(violations(output, 'callbacks-meet-orders-through-the-port')).toEqual([
      expect.stringContaining('src/callbacks/around-the-port.ts → src/orders/orders.repository.ts'),
    ]);
  });
});
