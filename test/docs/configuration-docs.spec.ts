import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadAppConfig } from '../../src/config/app-config';
import { loadSandboxCliConfig } from '../../src/config/sandbox-cli-config';

const ROOT = resolve(__dirname, '../..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');
const unique = (names: Iterable<string>) => [...new Set(names)].sort();

/** Variables the configuration readers look up, found in their source. */
function namesReadBy(path: string): string[] {
  const source = read(path);
  const found = [...source.matchAll(/\b(?:read|integer|devOnly|paramName|flag|retrySchedule|previousKeys)\(\s*'([A-Z][A-Z0-9_]+)'/g)].map(
    (m) => m[1],
  );
  found.push(...[...source.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]));
  return unique(found);
}

/** The page that documents every variable, and the section of it that holds the table. */
const CONFIGURATION_PAGE = 'docs/configuration.md';
const TABLE_SECTION = '\n## Variables\n';

/** The configuration page's table: variable names (first cell) and development default (third cell). */
function documentedConfigurationRows(): { names: string[]; defaultCell: string }[] {
  const page = read(CONFIGURATION_PAGE);
  const start = page.indexOf(TABLE_SECTION);
  if (start === -1) throw new Error(`${CONFIGURATION_PAGE} has no "## Variables" section`);
  const end = page.indexOf('\n## ', start + TABLE_SECTION.length);
  const section = page.slice(start, end === -1 ? undefined : end);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const cells = line.split(' | ');
      return { names: [...cells[0].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]), defaultCell: cells[2].trim() };
    });
}

/** `.env.example`: each `# NAME=` line with the comment block above it. */
function envExampleEntries(): { name: string; block: string }[] {
  return read('.env.example')
    .split(/\n\s*\n/)
    .flatMap((block) => [...block.matchAll(/^# ([A-Z][A-Z0-9_]+)=/gm)].map((m) => ({ name: m[1], block })));
}

// The retention settings and the currencies are read by loadAppConfig through readers of their own.
const appNames = unique([
  ...namesReadBy('src/config/app-config.ts'),
  ...namesReadBy('src/config/retention-settings.ts'),
  ...namesReadBy('src/config/currency-settings.ts'),
]);
const sandboxNames = namesReadBy('src/config/sandbox-cli-config.ts');
const everyName = unique([...appNames, ...sandboxNames]);
// Fixed so that two loads compare equal (its development default is random per process).
const BASE_ENV = { CALLBACK_SIGNING_SECRET: 'a-fixed-secret-of-at-least-32-characters!' };

/** A default cell that is one literal per variable of the row (not a prose default nor another variable). */
function literalDefaults(row: { names: string[]; defaultCell: string }): string[] | undefined {
  if (!/^`[^`]*`(, `[^`]*`)*$/.test(row.defaultCell)) return undefined;
  const values = [...row.defaultCell.matchAll(/`([^`]*)`/g)].map((m) => m[1]);
  if (values.length !== row.names.length || values.some((v) => /^[A-Z][A-Z0-9_]+$/.test(v))) return undefined;
  return values.map((v) => v.replace('$PORT', '3000'));
}

describe('the configuration documentation matches the configuration readers', () => {
  it('finds the variables of both readers', () => {
    expect(appNames).toEqual(expect.arrayContaining(['NODE_ENV', 'DATABASE_URL', 'PROVIDER_BASE_URL', 'SSE_KEEPALIVE_SECONDS']));
    expect(sandboxNames).toEqual(['SANDBOX_HOST', 'SANDBOX_PORT', 'SANDBOX_VERBOSE']);
  });

  it('lists every variable read, and no other, in the table of docs/configuration.md', () => {
    expect(unique(documentedConfigurationRows().flatMap((row) => row.names))).toEqual(everyName);
  });

  it('lists every variable read, and no other, in .env.example', () => {
    expect(unique(envExampleEntries().map((entry) => entry.name))).toEqual(everyName);
  });

  it('documents in docs/configuration.md the defaults the readers use', () => {
    const checked: string[] = [];
    for (const row of documentedConfigurationRows()) {
      const values = literalDefaults(row);
      if (!values) continue;
      row.names.forEach((name, index) => {
        const env = { ...BASE_ENV, [name]: values[index] };
        if (appNames.includes(name)) expect([name, loadAppConfig(env)]).toEqual([name, loadAppConfig(BASE_ENV)]);
        if (sandboxNames.includes(name)) expect([name, loadSandboxCliConfig(env)]).toEqual([name, loadSandboxCliConfig(BASE_ENV)]);
        checked.push(name);
      });
    }
    expect(checked).toEqual(expect.arrayContaining(['PORT', 'HOST', 'CURRENCIES', 'TRUST_PROXY', 'SANDBOX_HOST', 'SANDBOX_PORT']));
  });

  it('gives in .env.example the same default as the table of docs/configuration.md', () => {
    const documentedDefaults = new Map(documentedConfigurationRows().flatMap((row) => row.names.map((name) => [name, row.defaultCell])));
    const compared: string[] = [];
    for (const { name, block } of envExampleEntries()) {
      const stated = /Default(?: in development)?: (\S+?)[.,;]?(?:\s|$)/.exec(block)?.[1];
      const cell = documentedDefaults.get(name) ?? '';
      if (stated === undefined || !/^`[^`]*`$/.test(cell)) continue;
      expect([name, stated]).toEqual([name, cell.slice(1, -1)]);
      compared.push(name);
    }
    expect(compared).toEqual(expect.arrayContaining(['PORT', 'PROVIDER_TIMEOUT_MS', 'ORDER_EXPIRY_MINUTES', 'SANDBOX_PORT']));
  });
});
