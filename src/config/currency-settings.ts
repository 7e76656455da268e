import type { CurrencyRule } from '../common/money';

/**
 * CURRENCIES (`CODE:DECIMALS[:MAX]`, comma-separated; default XAF:0,XOF:0,EUR:2,USD:2) and
 * MAX_AMOUNT, the largest amount of a currency that names none, in minor units. `read` is
 * loadAppConfig's reader; each mistake is pushed onto `problems`.
 */
export function readCurrencies(read: (name: string) => string | undefined, problems: string[]): Record<string, CurrencyRule> {
  const maxAmount = read('MAX_AMOUNT') ?? '100000000';
  if (!/^[1-9]\d{0,14}$/.test(maxAmount))
    problems.push(`MAX_AMOUNT must be a positive whole number of at most 15 digits (got "${maxAmount}")`);
  const currencies: Record<string, CurrencyRule> = {};
  for (const entry of (read('CURRENCIES') ?? 'XAF:0,XOF:0,EUR:2,USD:2')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const match = /^([A-Z]{3}):([0-4])(?::([1-9]\d{0,14}))?$/.exec(entry);
    if (!match) {
      problems.push(`CURRENCIES entries must look like CODE:DECIMALS[:MAX], e.g. XAF:0 or EUR:2:50000 (got "${entry}")`);
      continue;
    }
    currencies[match[1]] = { code: match[1], decimals: Number(match[2]), maxAmount: match[3] ?? maxAmount };
  }
  if (Object.keys(currencies).length === 0) problems.push('CURRENCIES must list at least one currency');
  return currencies;
}
