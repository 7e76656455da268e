/**
 * The personal-data register: every column that holds a customer's personal data, what it holds,
 * whose rows are the customer's, and how an erasure replaces it. Declared once: the erasure reads
 * it (the tables it counts, the body columns it walks), docs/security.md lists it (test:
 * test/docs/personal-data-docs.spec.ts) and a test fails when a column of prisma/schema.prisma
 * that looks personal is neither here nor in NOT_PERSONAL (src/customers/personal-data.register.spec.ts).
 */

import { ERASED_MARK } from '../common/erased-mark';

export { ERASED_MARK };

export type ErasureMethod =
  /** The whole value becomes the mark. */
  | 'mark'
  /** The mark, sealed with DATA_ENCRYPTION_KEY like the values of the column (it holds ciphertexts only). */
  | 'sealed-mark'
  /** NULL: a lookup key derived from another personal column. */
  | 'cleared'
  /** Every occurrence of the customer's known values (JSON walked string by string, or text) becomes the mark. */
  | 'known-values';

export interface PersonalColumn {
  table: string;
  column: string;
  /** The personal data it may hold. */
  holds: string;
  /** Which rows are the customer's. */
  rows: string;
  erasure: ErasureMethod;
}

const ORDERS = "the customer's orders (customer_id)";
const ORDER_CHILDREN = "those of the customer's orders";
const CARD_USERS = "the customer's card users (owner_id)";
const WALLET_LINKS = "the customer's wallet links (owner_id)";
const DISTRIBUTIONS = "distributions that pay a matricule of the customer's wallet links";
const EVENTS = "events of the customer's orders, card operations and distributions";

export const PERSONAL_DATA_REGISTER: readonly PersonalColumn[] = [
  { table: 'orders', column: 'payer', holds: 'payer name', rows: ORDERS, erasure: 'mark' },
  { table: 'orders', column: 'payer_email', holds: 'payer email', rows: ORDERS, erasure: 'mark' },
  { table: 'orders', column: 'wallet', holds: 'mobile wallet (phone) number', rows: ORDERS, erasure: 'mark' },
  {
    table: 'order_status_changes',
    column: 'detail',
    holds: "the provider's words on a transition, which may quote the payer",
    rows: ORDER_CHILDREN,
    erasure: 'known-values',
  },
  {
    table: 'order_status_changes',
    column: 'note',
    holds: "a person's note on a resolution, which may name the payer",
    rows: ORDER_CHILDREN,
    erasure: 'known-values',
  },
  {
    table: 'provider_callbacks',
    column: 'query',
    holds: 'what the provider sent back in the URL',
    rows: ORDER_CHILDREN,
    erasure: 'known-values',
  },
  {
    table: 'provider_callbacks',
    column: 'headers',
    holds: 'what the provider sent back in headers',
    rows: ORDER_CHILDREN,
    erasure: 'known-values',
  },
  {
    table: 'provider_callbacks',
    column: 'raw_body',
    holds: "the provider's callback body (payer, email, wallet)",
    rows: ORDER_CHILDREN,
    erasure: 'known-values',
  },
  { table: 'card_users', column: 'first_name', holds: 'first name', rows: CARD_USERS, erasure: 'mark' },
  { table: 'card_users', column: 'last_name', holds: 'last name', rows: CARD_USERS, erasure: 'mark' },
  { table: 'card_users', column: 'email', holds: 'email', rows: CARD_USERS, erasure: 'mark' },
  { table: 'card_users', column: 'contact', holds: 'phone number', rows: CARD_USERS, erasure: 'mark' },
  { table: 'card_users', column: 'dob', holds: 'date of birth', rows: CARD_USERS, erasure: 'mark' },
  { table: 'card_users', column: 'billing_address', holds: 'street address', rows: CARD_USERS, erasure: 'mark' },
  { table: 'card_users', column: 'billing_city', holds: 'city of the address', rows: CARD_USERS, erasure: 'mark' },
  { table: 'card_users', column: 'billing_state', holds: 'state of the address', rows: CARD_USERS, erasure: 'mark' },
  { table: 'card_users', column: 'billing_postal_code', holds: 'postal code of the address', rows: CARD_USERS, erasure: 'mark' },
  { table: 'card_users', column: 'billing_country', holds: 'country of the address', rows: CARD_USERS, erasure: 'mark' },
  { table: 'card_users', column: 'business_name', holds: "a sole trader's business name", rows: CARD_USERS, erasure: 'mark' },
  {
    table: 'card_users',
    column: 'id_number_encrypted',
    holds: 'identity document number (sealed)',
    rows: CARD_USERS,
    erasure: 'sealed-mark',
  },
  {
    table: 'card_operations',
    column: 'provider_response',
    holds: "the provider's answer, which may echo the card holder",
    rows: "operations of the customer's card users",
    erasure: 'known-values',
  },
  {
    table: 'card_operations',
    column: 'failure_reason',
    holds: "the provider's message, which may quote the card holder",
    rows: "operations of the customer's card users",
    erasure: 'known-values',
  },
  { table: 'wallet_links', column: 'email', holds: 'email', rows: WALLET_LINKS, erasure: 'mark' },
  {
    table: 'wallet_links',
    column: 'email_key',
    holds: 'the email, lower-cased (one link per email)',
    rows: WALLET_LINKS,
    erasure: 'cleared',
  },
  { table: 'wallet_links', column: 'phone', holds: 'phone number', rows: WALLET_LINKS, erasure: 'mark' },
  {
    table: 'distributions',
    column: 'payer',
    holds: 'name of who paid a fiat payment (when it is the customer)',
    rows: DISTRIBUTIONS,
    erasure: 'known-values',
  },
  { table: 'distributions', column: 'provider_request', holds: 'what was sent (the payer)', rows: DISTRIBUTIONS, erasure: 'known-values' },
  { table: 'distributions', column: 'provider_response', holds: "the provider's answer", rows: DISTRIBUTIONS, erasure: 'known-values' },
  { table: 'distributions', column: 'provider_message', holds: "the provider's message", rows: DISTRIBUTIONS, erasure: 'known-values' },
  {
    table: 'distributions',
    column: 'failure_reason',
    holds: "the provider's message on a failure",
    rows: DISTRIBUTIONS,
    erasure: 'known-values',
  },
  {
    table: 'events',
    column: 'snapshot',
    holds: 'the order, card operation or distribution as shown (payer, email, wallet)',
    rows: EVENTS,
    erasure: 'known-values',
  },
  {
    table: 'webhook_attempts',
    column: 'response_body',
    holds: "a receiver's answer, which may echo the event",
    rows: `attempts delivering ${EVENTS}`,
    erasure: 'known-values',
  },
  {
    table: 'idempotency_records',
    column: 'response_body',
    holds: 'the answer replayed to a retry (the order, card user, wallet link)',
    rows: "the customer's keys, and staff's keys whose resource is the customer's or whose answer holds one of its values",
    erasure: 'known-values',
  },
  {
    table: 'idempotency_records',
    column: 'request_hash',
    holds: 'a hash of the request body (payer, email, wallet, identity number)',
    rows: "the customer's keys, and staff's keys whose resource is the customer's or whose answer holds one of its values",
    erasure: 'mark',
  },
  {
    table: 'provider_calls',
    column: 'url',
    holds: 'the URL called, with its query',
    rows: "calls whose URL or bodies hold one of the customer's values",
    erasure: 'known-values',
  },
  {
    table: 'provider_calls',
    column: 'request_body',
    holds: 'what was sent to the provider (payer, card user, wallet link)',
    rows: "calls whose URL or bodies hold one of the customer's values",
    erasure: 'known-values',
  },
  {
    table: 'provider_calls',
    column: 'response_body',
    holds: "the provider's answer (echoes of the above)",
    rows: "calls whose URL or bodies hold one of the customer's values",
    erasure: 'known-values',
  },
];

/**
 * Columns that look personal (by name or as a JSON body) and are not, each with why. The subject
 * (customer_id, owner_id, user_id, requested_by...) is the identity provider's pseudonymous id: it
 * is kept, so that finance still finds the customer's money; the merchant's identity provider is
 * where it meets a person.
 */
export const NOT_PERSONAL: Readonly<Record<string, string>> = {
  'card_users.country_code': 'a country alone identifies no one once the address is erased; the provider keeps the card user by it',
  'wallet_links.phone_country': 'a calling code alone identifies no one once the number is erased',
  'provider_callbacks.remote_ip': "the provider's address, not the customer's",
  'audit_events.details':
    "what staff did: statuses, filters, amounts, ids; the service never writes a customer's value into it (append-only)",
  'customer_erasures.counts': 'rows replaced per table',
  'customer_erasures.note': "staff's reason for the erasure (the API asks for no personal value in it)",
  'customer_limits.note': "staff's reason for a customer's limit",
  'audit_events.note': "staff's note on what they did (append-only)",
  'orders.failure_reason': "the service's words on why an order failed",
  'order_status_changes.reason': 'a code: created, provider_accepted, manual_resolution…',
  'card_operations.resolution_note': "staff's note on a decision",
  'distributions.resolution_note': "staff's note on a decision",
  'idempotency_records.state': 'in_progress or completed',
  'webhook_endpoints.disabled_reason': 'why an endpoint stopped receiving',
};

/** The tables an erasure changes, in the order it counts them. */
export const ERASURE_TABLES: readonly string[] = [...new Set(PERSONAL_DATA_REGISTER.map((entry) => entry.table))];

/** The columns of `table` whose known values an erasure replaces. */
export function knownValueColumns(table: string): string[] {
  return PERSONAL_DATA_REGISTER.filter((entry) => entry.table === table && entry.erasure === 'known-values').map((entry) => entry.column);
}
