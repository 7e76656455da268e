/** PROVIDER_CUSTOMER_HOURLY_LIMIT's default: 30 of the provider's 600 calls an hour, 5 % per customer. */
export const DEFAULT_CUSTOMER_HOURLY_LIMIT = 30;

/**
 * PROVIDER_CUSTOMER_HOURLY_LIMIT: the calls to /api/agent/* one customer's requests may cause per
 * rolling hour. At least 1 (a customer is blocked one at a time, by an override of 0) and at most
 * PROVIDER_AGENT_HOURLY_LIMIT (a share cannot exceed the whole). Unset: 30, or the whole budget
 * when that is smaller. A wrong value is pushed onto `problems` (the service then exits 78).
 */
export function customerHourlyLimit(raw: string | undefined, agentHourlyLimit: number, problems: string[]): number {
  const fallback = Math.min(DEFAULT_CUSTOMER_HOURLY_LIMIT, agentHourlyLimit);
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1 || Number(raw) > agentHourlyLimit) {
    problems.push(
      `PROVIDER_CUSTOMER_HOURLY_LIMIT must be an integer between 1 and PROVIDER_AGENT_HOURLY_LIMIT (${agentHourlyLimit}) (got "${raw}")`,
    );
    return fallback;
  }
  return Number(raw);
}
