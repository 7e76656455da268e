/**
 * Where each finance GET route of the API reads: the lists, reports and export the contract puts on
 * the replica, and the rest. test/database/finance-read-routes.spec.ts (integration tier) fails when a
 * finance GET route is in neither list; test/replica/finance-reads.replica-spec.ts proves the
 * replica list against a real standby.
 */

/**
 * The finance reads put on the replica, as finance calls them (`{id}`: a row seeded
 * for it), and the tables each reads: the standby's own statistics must show them read there.
 */
export const REPLICA_ROUTES = [
  { route: '/v1/orders', tables: ['orders'] },
  { route: '/v1/orders/export.csv', tables: ['orders'] },
  { route: '/v1/callbacks', tables: ['provider_callbacks'] },
  { route: '/v1/card-users', tables: ['card_users', 'cards'] },
  { route: '/v1/card-users/{id}/operations', tables: ['card_operations'] },
  { route: '/v1/cards', tables: ['cards'] },
  { route: '/v1/cards/{id}/operations', tables: ['card_operations'] },
  { route: '/v1/distributions', tables: ['distributions'] },
  { route: '/v1/events', tables: ['events'] },
  { route: '/v1/audit-events', tables: ['audit_events'] },
  { route: '/v1/reports/summary', tables: ['orders'] },
  { route: '/v1/reports/attention', tables: ['orders', 'card_operations', 'distributions'] },
] as const;
/**
 * The finance routes that stay on the primary: one thing by its id (or the provider's answer),
 * wallet links, a customer's provider budget. A new finance GET route fails finance-read-routes.spec.ts
 * until it is filed under one of the two lists.
 */
export const PRIMARY_ROUTES = [
  '/v1/customer-limits/{subject}',
  '/v1/orders/{id}',
  '/v1/orders/{id}/events',
  '/v1/card-users/{id}',
  '/v1/cards/{id}',
  '/v1/cards/{id}/transactions',
  '/v1/card-operations/{id}',
  '/v1/wallet-links',
  '/v1/wallet-links/{id}',
  '/v1/distributions/{id}',
  '/v1/events/{id}',
];
