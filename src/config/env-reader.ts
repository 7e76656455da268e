type Env = Record<string, string | undefined>;

/**
 * The readers loadAppConfig reads every variable with. A wrong value is pushed onto `problems`
 * (all are reported at once, the service then exits 78) and the reader answers its default, so
 * that reading goes on; in production a development-only default is a problem (`devOnly`).
 */
export function envReader(env: Env, { isProduction, problems }: { isProduction: boolean; problems: string[] }) {
  const read = (name: string) => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };
  const devOnly = (name: string, fallback: () => string | undefined, explain: string) => {
    const value = read(name);
    if (value !== undefined) return value;
    if (isProduction) {
      problems.push(`${name} is required in production (${explain})`);
      return undefined;
    }
    return fallback();
  };
  const integer = (name: string, fallback: number, min: number, max: number) => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };
  const url = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    try {
      const parsed = new URL(value);
      if (!['http:', 'https:', 'postgres:', 'postgresql:'].includes(parsed.protocol)) throw new Error('protocol');
      // One pass: `/\/+$/` backtracks quadratically on a long run of slashes.
      let end = value.length;
      while (end > 0 && value[end - 1] === '/') end--;
      return value.slice(0, end);
    } catch {
      problems.push(`${name} must be an absolute URL (got "${value}")`);
      return undefined;
    }
  };
  const paramName = (name: string, fallback: string) => {
    const value = read(name) ?? fallback;
    if (!/^[A-Za-z0-9_.-]+$/.test(value)) problems.push(`${name} must be a plain query parameter name (got "${value}")`);
    return value;
  };

  const flag = (name: string, fallback: boolean) => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (raw !== 'true' && raw !== 'false') {
      problems.push(`${name} must be true or false (got "${raw}")`);
      return fallback;
    }
    return raw === 'true';
  };
  const retrySchedule = (name: string, fallback: string) => {
    const raw = read(name) ?? fallback;
    const delays = raw.split(',').map((part) => part.trim());
    if (delays.length === 0 || delays.length > 50 || delays.some((d) => !/^\d{1,7}$/.test(d))) {
      problems.push(`${name} must be 1 to 50 comma-separated delays in whole seconds (got "${raw}")`);
      return fallback.split(',').map(Number);
    }
    return delays.map(Number);
  };
  /**
   * A comma-separated list of keys retired from a current key's variable: each entry is checked as
   * the current key is (`valid`), and none may be the current key. Messages name the variable and
   * the entry's position (1-based), never a value.
   */
  const previousKeys = <T>(name: string, valid: (entry: string) => T | undefined, expected: string, isCurrent: (key: T) => boolean) => {
    const raw = read(name);
    if (raw === undefined) return [];
    const keys: T[] = [];
    raw.split(',').forEach((text, index) => {
      const entry = text.trim();
      const parsed = entry === '' ? undefined : valid(entry);
      if (parsed === undefined) problems.push(`${name} entry ${index + 1} must be ${expected}`);
      else if (isCurrent(parsed)) problems.push(`${name} entry ${index + 1} equals the current key: remove it`);
      else keys.push(parsed);
    });
    return keys;
  };
  const secretOfLength = (entry: string) => (entry.length >= 32 ? entry : undefined);
  const base64Key = (entry: string) => {
    const key = Buffer.from(entry, 'base64');
    return key.length === 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(entry) ? key : undefined;
  };

  return { read, devOnly, integer, url, paramName, flag, retrySchedule, previousKeys, secretOfLength, base64Key };
}
