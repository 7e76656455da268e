import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { OrderFilter } from '../../src/orders/order.types';
import { keysetListStatementFor, keysetListValues } from '../../src/database/list-queries';
import { LIST_FILTERS, LIST_ORDERS } from '../../src/orders/orders.statements';
import { testDatabaseUrl } from '../support/test-database';

type PlanNode = { 'Node Type': string; 'Index Name'?: string; Plans?: PlanNode[] };

function nodeTypes(node: PlanNode): string[] {
  return [node['Node Type'], ...(node.Plans ?? []).flatMap(nodeTypes)];
}

function indexNames(node: PlanNode): string[] {
  return [...(node['Index Name'] ? [node['Index Name']] : []), ...(node.Plans ?? []).flatMap(indexNames)];
}

/** A value of each list filter, and the column its index leads with. */
const FILTER_EXAMPLES: Record<(typeof LIST_FILTERS)[number][0], { value: string | boolean; column: string }> = {
  customerId: { value: 'alice', column: 'customer_id' },
  status: { value: 'SUCCEEDED', column: 'status' },
  currency: { value: 'XAF', column: 'currency' },
  needsReview: { value: true, column: 'needs_review' },
};

/** Every set of the orders lists' filters, with the window and a position (each bound is an index condition). */
const FILTER_SETS = Array.from({ length: 1 << LIST_FILTERS.length }, (_, set) => {
  const fields = LIST_FILTERS.map(([field]) => field).filter((_field, i) => set & (1 << i));
  const filter: OrderFilter = Object.fromEntries(fields.map((field) => [field, FILTER_EXAMPLES[field].value]));
  return [fields.join(', ') || 'no filter', { ...filter, from: new Date('2026-01-01T00:00:00Z') }] as const;
});

/**
 * One connection, one transaction for the whole file, rolled back at the end: the planner chooses
 * by the tables' statistics, and the test database holds whatever the other specs left (nothing,
 * run alone), so the transaction first adds 5,000 orders shaped like real ones (500 customers, four
 * statuses, two currencies, one in a hundred to review) and analyses the table. Each plan is read
 * inside a savepoint rolled back after it (its SET LOCALs with it). No service runs: nothing else
 * waits on the embedded database's one transaction meanwhile.
 */
class PlanSession {
  private readonly client: Client;

  constructor(url: string) {
    this.client = new Client({ connectionString: url });
  }

  async open(): Promise<void> {
    await this.client.connect();
    await this.client.query('BEGIN');
    await this.client.query(
      `INSERT INTO orders (id, reference, customer_id, status, amount, currency, service, wallet, description, payer, payer_email,
                           needs_review, created_at, updated_at)
       SELECT gen_random_uuid(), 'ord_plan_' || i || '_' || gen_random_uuid(), 'plan-customer-' || (i % 500),
              (ARRAY['SUCCEEDED','FAILED','EXPIRED','UNKNOWN'])[1 + i % 4]::"OrderStatus", 100, (ARRAY['XAF','XOF'])[1 + i % 2], 1,
              '237600000001', 'Order', 'Payer', 'payer@example.com', i % 100 = 0,
              now() - make_interval(secs => i * 60), now() - make_interval(secs => i * 60)
       FROM generate_series(1, 5000) AS i`,
    );
    await this.client.query('ANALYZE orders');
  }

  async close(): Promise<void> {
    await this.client.query('ROLLBACK').catch(() => undefined);
    await this.client.end();
  }

  /** The plan of `sql` with sequential scans, sorts and bitmap scans priced out, `before` and `after` sent around its EXPLAIN. */
  async planOf(sql: string, { before = [] as string[], after = [] as string[] } = {}): Promise<PlanNode> {
    await this.client.query('SAVEPOINT plan');
    try {
      for (const plan of ['seqscan', 'sort', 'bitmapscan']) await this.client.query(`SET LOCAL enable_${plan} = off`);
      for (const statement of before) await this.client.query(statement);
      const explained = await this.client.query<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${sql}`);
      for (const statement of after) await this.client.query(statement);
      // The QUERY PLAN column is json: the driver hands it over parsed.
      const column = Object.values(explained.rows[0])[0];
      return ((typeof column === 'string' ? JSON.parse(column) : column) as { Plan: PlanNode }[])[0].Plan;
    } finally {
      await this.client.query('ROLLBACK TO SAVEPOINT plan');
    }
  }
}

describe('list queries and their indexes', () => {
  let session: PlanSession;

  // 5,000 rows and ANALYZE took 6 to 12 s on PGlite on a loaded 2-core machine. Its duration is not under test.
  beforeAll(async () => {
    // The worker's database is known once the setup file's beforeAll has run.
    session = new PlanSession(testDatabaseUrl());
    await session.open();
  }, 120_000);
  afterAll(() => session?.close());

  const keyset = (time: string) =>
    `AND (${time} < now() OR (${time} = now() AND id < '00000000-0000-0000-0000-000000000000'::uuid)) ORDER BY ${time} DESC, id DESC LIMIT 51`;

  it.each([
    ['orders, finance, no filter', `SELECT id FROM orders WHERE true ${keyset('created_at')}`],
    ['orders of one customer', `SELECT id FROM orders WHERE customer_id = 'alice' ${keyset('created_at')}`],
    ['orders by status', `SELECT id FROM orders WHERE status = 'SUCCEEDED' ${keyset('created_at')}`],
    ['orders by currency', `SELECT id FROM orders WHERE currency = 'XAF' ${keyset('created_at')}`],
    ['orders needing review', `SELECT id FROM orders WHERE needs_review = true ${keyset('created_at')}`],
    ['callbacks, no filter', `SELECT id FROM provider_callbacks WHERE true ${keyset('received_at')}`],
    ['callbacks by result', `SELECT id FROM provider_callbacks WHERE result = 'CONFLICT' ${keyset('received_at')}`],
    ['callbacks by outcome', `SELECT id FROM provider_callbacks WHERE outcome = 'failure' ${keyset('received_at')}`],
    [
      'callbacks of one order',
      `SELECT id FROM provider_callbacks WHERE order_id = '00000000-0000-0000-0000-000000000000'::uuid ORDER BY received_at ASC`,
    ],
    ['card users of one owner', `SELECT id FROM card_users WHERE owner_id = 'alice' ${keyset('created_at')}`],
    ['cards of one owner', `SELECT id FROM cards WHERE owner_id = 'alice' ${keyset('created_at')}`],
    ['wallet links of one owner', `SELECT id FROM wallet_links WHERE owner_id = 'alice' ${keyset('created_at')}`],
    ['distributions', `SELECT id FROM distributions WHERE true ${keyset('created_at')}`],
  ])('%s', async (_name, sql) => {
    const root = await session.planOf(sql);
    // Sort, Incremental Sort, Seq Scan: each means an index is missing or in the wrong order.
    expect(nodeTypes(root).filter((type) => /Sort|Seq Scan/.test(type))).toEqual([]);
  });

  /**
   * The orders lists' own statements, on the generic plan a prepared statement settles on after
   * five executions: it must still scan the index of one of the filters it has, in keyset order.
   * A statement with `$n IS NULL OR column = $n` conditions would scan the time index instead.
   */
  it.each(FILTER_SETS)('orders list statement, generic plan: %s', async (_name, filter) => {
    const statement = keysetListStatementFor(LIST_ORDERS, LIST_FILTERS, filter);
    const name = `plan_check_${randomUUID().replace(/-/g, '')}`;
    const values = keysetListValues(LIST_FILTERS, filter, { limit: 51, after: { at: new Date('2030-01-01T00:00:00Z'), id: randomUUID() } });
    const literal = (value: unknown) => `'${(value instanceof Date ? value.toISOString() : String(value)).replace(/'/g, "''")}'`;
    const root = await session.planOf(`EXECUTE ${name}(${values.map(literal).join(', ')})`, {
      before: ['SET LOCAL plan_cache_mode = force_generic_plan', `PREPARE ${name} AS ${statement.text}`],
      after: [`DEALLOCATE ${name}`],
    });
    expect(nodeTypes(root).filter((type) => /Sort|Seq Scan/.test(type))).toEqual([]);
    const leading = LIST_FILTERS.filter(([field]) => filter[field] !== undefined).map(([field]) => FILTER_EXAMPLES[field].column);
    const expected = leading.length ? leading.map((column) => `orders_${column}_created_at_id_idx`) : ['orders_created_at_id_idx'];
    const [index, ...others] = indexNames(root);
    expect(others).toEqual([]);
    expect(expected).toContain(index);
  });
});
