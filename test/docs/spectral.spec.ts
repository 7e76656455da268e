/**
 * `npm run lint:openapi`: the committed openapi.json passes Stoplight Spectral's `spectral:oas`
 * ruleset (.spectral.yaml) with no problem at all, errors, warnings, infos or hints.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(__dirname, '../..');
const SPECTRAL = resolve(ROOT, 'node_modules/.bin/spectral');
const RULESET = resolve(ROOT, '.spectral.yaml');

type SpectralResult = { code: string; message: string; path: string[]; severity: number };

/** Spectral's findings on `file` with the project's ruleset, as JSON. */
async function lint(file: string): Promise<SpectralResult[]> {
  // Spectral exits non-zero when it finds something at or above --fail-severity: read its report either way.
  const { stdout } = await promisify(execFile)(
    SPECTRAL,
    ['lint', file, '--ruleset', RULESET, '--format', 'json', '--quiet', '--fail-severity', 'hint'],
    { cwd: ROOT },
  ).catch((error: { stdout?: string; stderr?: string }) => {
    if (!error.stdout?.trim().startsWith('[')) throw new Error(`spectral failed: ${error.stderr ?? String(error)}`);
    return { stdout: error.stdout };
  });
  return JSON.parse(stdout) as SpectralResult[];
}

describe('Spectral (spectral:oas) on openapi.json', () => {
  it('uses the spectral:oas ruleset', () => {
    expect(readFileSync(RULESET, 'utf8')).toMatch(/extends:\s*\[\s*["']spectral:oas["']\s*\]/);
  });

  it('finds no problem: 0 errors, 0 warnings', async () => {
    const findings = (await lint(resolve(ROOT, 'openapi.json'))).map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`);
    expect(findings).toEqual([]);
  }, 60_000);

  it('would report what the document used to lack (undeclared tags, missing descriptions, no servers)', async () => {
    const document = JSON.parse(readFileSync(resolve(ROOT, 'openapi.json'), 'utf8'));
    delete document.tags;
    delete document.servers;
    delete document.paths['/health/live'].get.description;
    const dir = mkdtempSync(join(tmpdir(), 'spectral-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(document));
      const codes = new Set((await lint(file)).map((r) => r.code));
      expect([...codes].sort()).toEqual(['oas3-api-servers', 'operation-description', 'operation-tag-defined']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
