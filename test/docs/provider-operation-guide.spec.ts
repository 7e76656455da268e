import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

/**
 * docs/guides/adding-a-provider-operation.md cannot drift from the code: each of its ```ts blocks is
 * type-checked against the real src/, as a module of src/cards/ (where its relative imports point),
 * served to the compiler from memory (nothing is written). A block naming something that does not
 * exist, or using it wrongly, is a diagnostic.
 */
const ROOT = resolve(__dirname, '..', '..');
const GUIDE = join(ROOT, 'docs', 'guides', 'adding-a-provider-operation.md');

function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
}

/** The diagnostics of `sources`, each compiled as src/cards/guide-block-<n>.ts with the project's tsconfig. */
function diagnosticsOf(sources: readonly string[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  const files = new Map(sources.map((text, i) => [join(ROOT, 'src', 'cards', `guide-block-${i + 1}.ts`), text]));
  const host = ts.createCompilerHost(config.options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError, create) => {
    const text = files.get(resolve(name));
    return text === undefined ? getSourceFile(name, language, onError, create) : ts.createSourceFile(name, text, language);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => files.has(resolve(name)) || fileExists(name);
  const program = ts.createProgram([...files.keys()], { ...config.options, noEmit: true, incremental: false }, host);
  return [...files.keys()].flatMap((name) =>
    ts.getPreEmitDiagnostics(program, program.getSourceFile(name)).map((d) => {
      const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      return `${d.file?.fileName.slice(ROOT.length + 1)}${where ? `:${where.line + 1}` : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    }),
  );
}

describe('docs/guides/adding-a-provider-operation.md', () => {
  const blocks = tsBlocks(readFileSync(GUIDE, 'utf8'));

  it('has its code in ts blocks', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(3);
  });

  it('every ts block compiles against src/, without a diagnostic', () => {
    expect(diagnosticsOf(blocks)).toEqual([]);
  }, 120_000);

  it('a block naming what does not exist is caught (the check can fail)', () => {
    const drifted = `import { IDEMPOTENCY_LINK } from '../provider-operations/operation-tables';\nexport const link = IDEMPOTENCY_LINK;\n`;
    expect(diagnosticsOf([drifted]).join('\n')).toMatch(/IDEMPOTENCY_LINK/);
  }, 120_000);
});
