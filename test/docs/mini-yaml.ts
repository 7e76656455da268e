/**
 * A reader for the small YAML subset docker-compose.yml is written in, so that its structure can
 * be tested without a YAML dependency: block maps and lists by indentation, comments, plain,
 * single- and double-quoted scalars, JSON-style flow lists, anchors on maps (`&name`), aliases
 * (`*name`) and merge keys (`<<: *name`). Anything else is an error naming the line, never a
 * silent misreading.
 */
export type YamlValue = string | number | boolean | null | YamlValue[] | { [key: string]: YamlValue };
type YamlMap = { [key: string]: YamlValue };

interface Line {
  number: number;
  indent: number;
  text: string;
}

export function parseYaml(source: string): YamlValue {
  const lines: Line[] = [];
  source.split(/\r?\n/).forEach((raw, index) => {
    const text = stripComment(raw).trimEnd();
    if (text.trim() === '') return;
    if (/^\t/.test(raw)) throw new Error(`line ${index + 1}: tabs are not YAML indentation`);
    lines.push({ number: index + 1, indent: text.length - text.trimStart().length, text: text.trim() });
  });
  const anchors = new Map<string, YamlValue>();
  let position = 0;

  const fail = (line: Line, message: string): never => {
    throw new Error(`line ${line.number}: ${message}: ${line.text}`);
  };

  const scalar = (line: Line, text: string): YamlValue => {
    if (text.startsWith('*')) {
      const name = text.slice(1);
      if (!anchors.has(name)) fail(line, `unknown alias *${name}`);
      return anchors.get(name)!;
    }
    if (text.startsWith('"')) return JSON.parse(text) as string;
    if (text.startsWith("'")) {
      if (!/^'(?:[^']|'')*'$/.test(text)) fail(line, 'unterminated single-quoted scalar');
      return text.slice(1, -1).replace(/''/g, "'");
    }
    if (text.startsWith('[')) {
      try {
        return JSON.parse(text) as YamlValue[];
      } catch {
        return fail(line, 'flow lists must be written as JSON arrays');
      }
    }
    if (/^[{&!|>%@`]/.test(text)) fail(line, 'unsupported YAML syntax');
    if (text === 'true' || text === 'false') return text === 'true';
    if (text === 'null' || text === '~') return null;
    if (/^-?\d+$/.test(text)) return Number(text);
    return text;
  };

  const block = (indent: number): YamlValue => {
    const first = lines[position];
    return first.text === '-' || first.text.startsWith('- ') ? list(indent) : map(indent);
  };

  /** The value after `key:` or `- `: inline, or the deeper block that follows. */
  const value = (line: Line, rest: string): YamlValue => {
    let anchor: string | undefined;
    const anchored = /^&[A-Za-z0-9_.-]+/.exec(rest);
    if (anchored) {
      anchor = anchored[0].slice(1);
      rest = rest.slice(anchored[0].length).trimStart();
    }
    let result: YamlValue;
    if (rest !== '') result = scalar(line, rest);
    else if (position < lines.length && lines[position].indent > line.indent) result = block(lines[position].indent);
    else result = null;
    if (anchor) anchors.set(anchor, result);
    return result;
  };

  const map = (indent: number): YamlMap => {
    const result: YamlMap = {};
    // Keys written in the map win over merged ones, wherever the merge key stands.
    const merged: YamlMap = {};
    while (position < lines.length && lines[position].indent === indent) {
      const line = lines[position++];
      const entry = /^("(?:[^"\\]|\\.)*"|'[^']*'|[^\s'"#-][^:]*?|<<):(?:\s+(\S.*))?$/.exec(line.text);
      if (!entry) fail(line, 'expected `key: value`');
      const key = entry![1].startsWith('"') ? (JSON.parse(entry![1]) as string) : entry![1].replace(/^'|'$/g, '');
      const item = value(line, entry![2] ?? '');
      if (key === '<<') {
        if (!item || typeof item !== 'object' || Array.isArray(item)) fail(line, 'merge key needs a map alias');
        for (const [k, v] of Object.entries(item as YamlMap)) if (!(k in merged)) merged[k] = v;
        continue;
      }
      if (Object.prototype.hasOwnProperty.call(result, key)) fail(line, `duplicate key "${key}"`);
      result[key] = item;
    }
    if (position < lines.length && lines[position].indent > indent) fail(lines[position], 'unexpected indentation');
    for (const [k, v] of Object.entries(merged)) if (!Object.prototype.hasOwnProperty.call(result, k)) result[k] = v;
    return result;
  };

  const list = (indent: number): YamlValue[] => {
    const result: YamlValue[] = [];
    while (
      position < lines.length &&
      lines[position].indent === indent &&
      (lines[position].text === '-' || lines[position].text.startsWith('- '))
    ) {
      const line = lines[position++];
      const rest = line.text.slice(1).trim();
      if (/^[^\s'"[*][^:]*:(\s|$)/.test(rest)) fail(line, 'maps inside lists are not supported');
      result.push(value(line, rest));
    }
    if (position < lines.length && lines[position].indent > indent) fail(lines[position], 'unexpected indentation');
    return result;
  };

  if (lines.length === 0) return null;
  const document = block(lines[0].indent);
  if (position < lines.length) fail(lines[position], 'unexpected content');
  return document;
}

/** The line without its comment: a `#` at the start or after a space, outside quotes. */
function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i);
  }
  return line;
}
