/** `false` (default: the peer address is the client), `true`, a hop count, or a list of addresses/CIDRs. */
export function parseTrustProxy(value: string | undefined, problems: string[]): boolean | number | string[] {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d{1,2}$/.test(value)) return Number(value);
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length && entries.every((e) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(e))) return entries;
  problems.push(`TRUST_PROXY must be false, true, a hop count or addresses/CIDRs (got "${value}")`);
  return false;
}
