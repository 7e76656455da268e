/** How long operational records are kept (RETENTION_*), as `loadAppConfig` reads them. */
export interface RetentionSettings {
  /** RETENTION_PROVIDER_CALLS_DAYS: the provider call log is deleted this many days after each call. */
  providerCallsDays: number;
  /** RETENTION_WEBHOOK_DAYS: an event, its deliveries and their attempts, this many days after the event once every delivery is final. */
  webhookDays: number;
}

/** A hundred years: a bound, not a policy. */
const MAX_RETENTION_DAYS = 36_500;

/** `integer` is loadAppConfig's reader: a problem is reported with the others, the default kept. */
export function readRetentionSettings(integer: (name: string, fallback: number, min: number, max: number) => number): RetentionSettings {
  return {
    providerCallsDays: integer('RETENTION_PROVIDER_CALLS_DAYS', 90, 1, MAX_RETENTION_DAYS),
    webhookDays: integer('RETENTION_WEBHOOK_DAYS', 30, 1, MAX_RETENTION_DAYS),
  };
}
