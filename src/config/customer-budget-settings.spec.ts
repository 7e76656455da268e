import fc from 'fast-check';
import { loadAppConfig } from './app-config';
import { PRODUCTION_ENV, problemsOf } from './app-config.spec-support';
import { customerHourlyLimit, DEFAULT_CUSTOMER_HOURLY_LIMIT } from './customer-budget-settings';

describe('PROVIDER_CUSTOMER_HOURLY_LIMIT', () => {
  it('defaults to 30 of the 600, in development and in production', () => {
    expect(DEFAULT_CUSTOMER_HOURLY_LIMIT).toBe(30);
    expect(loadAppConfig({}).provider.customerHourlyLimit).toBe(30);
    expect(loadAppConfig(PRODUCTION_ENV).provider.customerHourlyLimit).toBe(30);
  });

  it('unset under a smaller whole budget: the whole budget', () => {
    expect(loadAppConfig({ PROVIDER_AGENT_HOURLY_LIMIT: '10' }).provider.customerHourlyLimit).toBe(10);
  });

  it('takes any whole number from 1 to PROVIDER_AGENT_HOURLY_LIMIT', () => {
    expect(loadAppConfig({ PROVIDER_CUSTOMER_HOURLY_LIMIT: '1' }).provider.customerHourlyLimit).toBe(1);
    expect(loadAppConfig({ PROVIDER_CUSTOMER_HOURLY_LIMIT: '600' }).provider.customerHourlyLimit).toBe(600);
  });

  it.each(['0', '601', '-1', '1.5', 'thirty', '1e2', '99999999999999999999'])(
    'refuses "%s" as a configuration problem naming the variable and its bounds (exit 78)',
    (value) => {
      expect(problemsOf({ ...PRODUCTION_ENV, PROVIDER_CUSTOMER_HOURLY_LIMIT: value })).toEqual([
        `PROVIDER_CUSTOMER_HOURLY_LIMIT must be an integer between 1 and PROVIDER_AGENT_HOURLY_LIMIT (600) (got "${value}")`,
      ]);
    },
  );

  it('is listed with the other problems, the whole budget it is bounded by included', () => {
    const problems = problemsOf({
      ...PRODUCTION_ENV,
      PROVIDER_AGENT_HOURLY_LIMIT: '20',
      PROVIDER_CUSTOMER_HOURLY_LIMIT: '21',
      LOG_LEVEL: 'loud',
    });
    expect(problems).toHaveLength(2);
    expect(problems).toContainEqual(
      'PROVIDER_CUSTOMER_HOURLY_LIMIT must be an integer between 1 and PROVIDER_AGENT_HOURLY_LIMIT (20) (got "21")',
    );
  });

  it('any text: either a whole number within the bounds, or a problem and the default', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 1_000_000 }), (raw, whole) => {
        const problems: string[] = [];
        const limit = customerHourlyLimit(raw, whole, problems);
        expect(Number.isInteger(limit) && limit >= 1 && limit <= whole).toBe(true);
        expect(problems.length === 0).toBe(String(limit) === raw);
      }),
    );
  });
});
