/**
 * The tables the retention job may delete from: operational records that age out. Every statement
 * of the retention repository names only these (test: src/retention/retention-tables.spec.ts); the
 * financial tables are not reachable from it, whatever a row's age.
 */
export const OPERATIONAL_TABLES = ['provider_calls', 'events', 'webhook_deliveries', 'webhook_attempts'] as const;
export type OperationalTable = (typeof OPERATIONAL_TABLES)[number];

/** Kept for good: what accounting, disputes and the audit need, never pruned. */
export const FINANCIAL_TABLES = [
  'orders',
  'order_status_changes',
  'provider_callbacks',
  'card_users',
  'cards',
  'card_operations',
  'wallet_links',
  'distributions',
  'distribution_shares',
  'audit_events',
  'customer_erasures',
] as const;

/** Rows a pass deleted, per table. */
export type PruneCounts = Record<OperationalTable, number>;

export const noPruneCounts = (): PruneCounts => ({ provider_calls: 0, events: 0, webhook_deliveries: 0, webhook_attempts: 0 });
