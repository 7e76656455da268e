import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');

const PAGE = 'docs/security.md';
const SECTION = '\n## Shared resources and their bound per party\n';
const COLUMNS = ['resource', 'counted per', 'bound', 'variable', 'test'];

interface Row {
  resource: string;
  variables: string[];
  fixed: boolean;
  tests: string[];
}

/** The table's rows: the names in backticks of its variable and test cells. */
function tableRows(): Row[] {
  const page = read(PAGE);
  const start = page.indexOf(SECTION);
  if (start === -1) throw new Error(`${PAGE} has no "Shared resources and their bound per party" section`);
  const end = page.indexOf('\n## ', start + SECTION.length);
  const lines = page
    .slice(start, end === -1 ? undefined : end)
    .split('\n')
    .filter((line) => line.startsWith('|'));
  const cellsOf = (line: string) =>
    line
      .slice(1, -1)
      .split(' | ')
      .map((cell) => cell.trim());
  expect(cellsOf(lines[0])).toEqual(COLUMNS);
  return lines.slice(2).map((line) => {
    const cells = cellsOf(line);
    expect([cells[0], cells.length]).toEqual([cells[0], COLUMNS.length]);
    const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    return { resource: cells[0], variables: names(cells[3]), fixed: cells[3].startsWith('fixed:'), tests: names(cells[4]) };
  });
}

/** Every TypeScript source under src/ (generated code aside), read once. */
function sources(): string {
  const texts: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (name !== 'generated') walk(path);
      } else if (name.endsWith('.ts') && !name.endsWith('.spec.ts')) texts.push(readFileSync(path, 'utf8'));
    }
  };
  walk(resolve(ROOT, 'src'));
  return texts.join('\n');
}

describe(`${PAGE}: the table of shared resources cannot drift`, () => {
  const rows = tableRows();
  const source = sources();
  const envExample = read('.env.example');
  const configSource = readdirSync(resolve(ROOT, 'src/config'))
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'))
    .map((name) => read(`src/config/${name}`))
    .join('\n');

  it('lists at least the resources every party shares', () => {
    const resources = rows.map((row) => row.resource).join('\n');
    for (const resource of [
      'provider budget',
      'webhook delivery slots',
      'connections',
      'live status streams',
      'database pool',
      'public routes',
      'request bodies',
      'key set',
      "provider's answers",
      "webhook receivers' answers",
    ])
      expect([resource, resources.includes(resource)]).toEqual([resource, true]);
  });

  it.each(rows.map((row) => [row.resource, row] as const))('%s: its tests exist, as test files', (_resource, row) => {
    expect(row.tests.length).toBeGreaterThan(0);
    for (const test of row.tests) {
      expect([test, /\.(e2e-)?spec\.ts$/.test(test)]).toEqual([test, true]);
      expect([test, existsSync(resolve(ROOT, test))]).toEqual([test, true]);
    }
  });

  it.each(rows.map((row) => [row.resource, row] as const))(
    '%s: its variables are read by the configuration and shown in .env.example; its constants are declared',
    (_resource, row) => {
      expect(row.variables.length).toBeGreaterThan(0);
      for (const name of row.variables) {
        expect([name, /^[A-Z][A-Z0-9_]+$/.test(name)]).toEqual([name, true]);
        if (row.fixed) {
          expect([name, new RegExp(`\\bconst ${name}\\b`).test(source)]).toEqual([name, true]);
        } else {
          expect([name, new RegExp(`^#? ?${name}=`, 'm').test(envExample)]).toEqual([name, true]);
          expect([name, configSource.includes(`'${name}'`)]).toEqual([name, true]);
        }
      }
    },
  );
});
