import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
/** Folders that hold no documentation of ours (installed, built, generated or runtime data). */
const SKIPPED = new Set(['node_modules', '.git', 'dist', 'coverage', 'generated', '.data']);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return SKIPPED.has(name) ? [] : markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** The text a reader sees as prose: fenced code blocks and inline code removed (their brackets are not links). */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower-cased, punctuation dropped, spaces as dashes; repeats get -1, -2, ... */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const withoutFences = markdown.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '');
  for (const line of withoutFences.split('\n')) {
    const level = /^#{1,6} /.exec(line);
    if (!level) continue;
    const heading = line.slice(level[0].length).trim();
    let text = heading;
    while (text.endsWith('#')) text = text.slice(0, -1);
    const base = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Relative link targets of a Markdown file: `[text](target)`, without web, mail or absolute URLs. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('/'));
}

const files = markdownFiles(ROOT);

describe('the Markdown documentation', () => {
  it('is found', () => {
    const names = files.map((file) => relative(ROOT, file));
    expect(names).toEqual(expect.arrayContaining(['README.md', 'ARCHITECTURE.md', 'CONTRIBUTING.md', 'docs/configuration.md']));
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of files) {
      const markdown = readFileSync(file, 'utf8');
      for (const target of relativeLinks(markdown)) {
        const [pathPart, anchor] = target.split('#', 2);
        const path = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
        const where = `${relative(ROOT, file)} -> ${target}`;
        if (!existsSync(path)) {
          broken.push(`${where}: no such file`);
          continue;
        }
        if (anchor && path.endsWith('.md') && !anchorsOf(readFileSync(path, 'utf8')).has(anchor.toLowerCase()))
          broken.push(`${where}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('never points outside the repository at ../shared', () => {
    const outside = files
      .filter((file) => /\.\.\/shared\b|shared\/spec/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(outside).toEqual([]);
  });
});
