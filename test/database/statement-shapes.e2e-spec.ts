import { Client } from 'pg';
import { allStatements } from '../../scripts/sql-queries';
import type { SqlStatement } from '../../src/database/sql-statement';
import { testDatabaseUrl } from '../support/test-database';

interface DescribedField {
  name: string;
  tableID: number;
  columnID: number;
  dataTypeID: number;
}

/**
 * Asks PostgreSQL to parse and describe a statement without running it (the extended protocol's
 * Parse, Describe, Sync): the columns it would answer, with their types and source columns.
 */
function describeStatement(client: Client, text: string): Promise<DescribedField[]> {
  return new Promise((resolve, reject) => {
    let fields: DescribedField[] = [];
    let failure: Error | undefined;
    const describe = {
      submit(connection: {
        parse(query: { text: string; name: string; types: number[] }): void;
        describe(message: { type: string; name: string }): void;
        sync(): void;
      }) {
        connection.parse({ text, name: '', types: [] });
        connection.describe({ type: 'S', name: '' });
        connection.sync();
      },
      handleRowDescription(message: { fields: DescribedField[] }) {
        fields = message.fields;
      },
      handleError(error: Error) {
        failure = error;
      },
      handleReadyForQuery() {
        if (failure) reject(failure);
        else resolve(fields);
      },
      handleParseComplete() {},
      handleEmptyQuery() {},
      handleCommandComplete() {},
      handleDataRow() {},
      handlePortalSuspended() {},
      handleCopyInResponse() {},
      handleCopyData() {},
    };
    void (client.query as unknown as (submittable: unknown) => unknown)(describe);
  });
}

/**
 * Every written-out statement of src/ is checked against the migrated schema: the columns its
 * repository declares (and so the row type the code sees) are the columns PostgreSQL says it
 * answers, by name, order and type; an enum column carries exactly the area's labels; a column
 * read straight from a nullable table column is declared nullable. A statement that does not
 * parse fails here too. Nothing is run.
 */
describe('the declared columns of every statement', () => {
  let client: Client;
  const typeNames = new Map<number, string>();
  const enumLabels = new Map<string, string[]>();
  const nullable = new Set<string>();

  beforeAll(async () => {
    client = new Client({ connectionString: testDatabaseUrl() });
    await client.connect();
    for (const row of (await client.query<{ oid: number; typname: string }>('SELECT oid::int AS oid, typname FROM pg_type')).rows)
      typeNames.set(row.oid, row.typname);
    const labels = await client.query<{ typname: string; labels: string[] }>(
      `SELECT t.typname, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
       FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid GROUP BY t.typname`,
    );
    for (const row of labels.rows) enumLabels.set(row.typname, row.labels);
    const columns = await client.query<{ rel: number; num: number }>(
      `SELECT a.attrelid::int AS rel, a.attnum::int AS num FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attnotnull`,
    );
    for (const row of columns.rows) nullable.add(`${row.rel}:${row.num}`);
  });
  afterAll(async () => {
    await client?.end();
  });

  const statements = allStatements();

  it('finds the statements of every repository', () => {
    expect(statements.length).toBeGreaterThan(40);
  });

  it.each(statements.map((s): [string, SqlStatement] => [`${s.repository}: ${s.name}`, s]))('%s', async (_, statement) => {
    const fields = await describeStatement(client, statement.text);
    const declared = Object.entries(statement.columns).map(([name, c]) => ({
      name,
      type: c.type,
      ...(c.enumLabels ? { labels: [...c.enumLabels] } : {}),
    }));
    const described = fields.map((f, index) => {
      const type = typeNames.get(f.dataTypeID) ?? `oid ${f.dataTypeID}`;
      const labels = enumLabels.get(type);
      const declaredLabels = declared[index]?.labels;
      return { name: f.name, type, ...(labels && declaredLabels ? { labels } : {}) };
    });
    expect(described).toEqual(declared);

    const declaredNonNull = Object.entries(statement.columns).filter(([, c]) => !c.nullable);
    const nullableSources = fields
      .filter((f) => f.tableID !== 0 && nullable.has(`${f.tableID}:${f.columnID}`))
      .map((f) => f.name)
      .filter((name) => declaredNonNull.some(([declaredName]) => declaredName === name));
    expect({ 'read from a nullable column, declared NOT NULL': nullableSources }).toEqual({
      'read from a nullable column, declared NOT NULL': [],
    });
  });
});
