import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { registeredStatements } from '../database/sql-statement';
import './retention.repository';
import { FINANCIAL_TABLES, OPERATIONAL_TABLES } from './retention-tables';

/** Tables that are neither: each purged by a job of its own, or kept for what it is. */
const OTHER_TABLES: Record<string, string> = {
  idempotency_records: 'kept 24 h, purged by the idempotency purge',
  provider_tokens: 'one row per provider host and key',
  agent_budgets: 'one row per provider budget',
  customer_budgets: 'one row per customer, swept an hour after its last call by the budget sweep',
  customer_limits: 'one row per customer with its own limit',
  webhook_endpoints: "the merchant's configuration",
};

const tablesOf = (sql: string, pattern: RegExp) => [...sql.matchAll(pattern)].map((m) => m[1]);

describe('the retention job knows only the operational tables', () => {
  const statements = registeredStatements().filter((s) => s.repository === 'retention.repository');

  it('its statements delete only from operational tables and name no financial table', () => {
    expect(statements.length).toBeGreaterThan(0);
    for (const { text } of statements) {
      expect(
        tablesOf(text, /\b(?:DELETE FROM|(?<!FOR\s)UPDATE|INSERT INTO)\s+(\w+)/gi).filter(
          (t) => !(OPERATIONAL_TABLES as readonly string[]).includes(t),
        ),
      ).toEqual([]);
      const named = tablesOf(text, /\b(?:FROM|JOIN|(?<!FOR\s)UPDATE|INTO)\s+(\w+)/gi);
      expect(named.filter((t) => (FINANCIAL_TABLES as readonly string[]).includes(t))).toEqual([]);
      expect(
        named.filter(
          (t) =>
            ![
              ...OPERATIONAL_TABLES,
              'webhook_endpoints',
              'expired',
              'doomed_deliveries',
              'deleted_events',
              'deleted_deliveries',
              'deleted_attempts',
            ].includes(t),
        ),
      ).toEqual([]);
    }
  });

  it('every table of the schema is classified, and none is both operational and financial', () => {
    const schema = readFileSync(resolve(__dirname, '../../prisma/schema.prisma'), 'utf8');
    const tables = [...schema.matchAll(/@@map\("(\w+)"\)/g)].map((m) => m[1]).sort();
    const classified = [...OPERATIONAL_TABLES, ...FINANCIAL_TABLES, ...Object.keys(OTHER_TABLES)];
    expect(new Set(classified).size).toBe(classified.length);
    expect(classified.sort()).toEqual(tables);
  });
});
