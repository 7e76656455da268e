import request from 'supertest';
import { column, sqlStatement } from '../../src/database/sql-statement';
import { CallbackUrlsService } from '../../src/orders/callback-urls.service';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { customer, parseSse } from '../support/orders-client';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { testDatabaseUrl } from '../support/test-database';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** The names under which the session holds `name` prepared: none when it was sent unnamed. */
const preparedAs = (name: string) =>
  sqlStatement(
    'pooled-statements.e2e-spec',
    'test',
    name,
    `
  SELECT name FROM pg_prepared_statements WHERE name LIKE '${name}%'`,
    { name: column.text },
  );
// One statement per instance: on the embedded database every connection shares one session.
const NAMED = preparedAs('test_statements_sent_named');
const UNNAMED = preparedAs('test_statements_sent_unnamed');

/** The same URL with `pgbouncer=true` added to its query. */
function pooled(url: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('pgbouncer', 'true');
  return parsed.toString();
}

/**
 * Through a transaction-mode pooler a statement prepared under a name on one server session is
 * missing on the next: with `pgbouncer=true` Database sends its statements unnamed, and only
 * then (test/pooler/ runs both modes through PgBouncer itself). Without DATABASE_DIRECT_URL such an
 * instance does not listen, and its live streams poll.
 */
describe('Database statements, named or not', () => {
  let sandbox: RunningSandbox;
  let direct: TestService;
  let throughPooler: TestService;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    [direct, throughPooler] = await Promise.all([
      startTestService(sandbox),
      startTestService(sandbox, { DATABASE_URL: pooled(testDatabaseUrl()) }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([direct?.close(), throughPooler?.close()]);
    await sandbox?.close();
  });

  it('are prepared under a name of their own per connection, straight to PostgreSQL', async () => {
    expect(direct.config.databasePooled).toBe(false);
    const names = (await direct.prisma.run(NAMED, [])).map((row) => row.name);
    expect(names).toEqual([expect.stringMatching(/^test_statements_sent_named_\w+$/)]);
    // Sent again on the same connection: prepared once.
    expect((await direct.prisma.run(NAMED, [])).map((row) => row.name)).toEqual(names);
  });

  it('are sent unnamed with pgbouncer=true, in transactions too', async () => {
    expect(throughPooler.config.databasePooled).toBe(true);
    expect(await throughPooler.prisma.run(UNNAMED, [])).toEqual([]);
    expect(await throughPooler.prisma.run(UNNAMED, [])).toEqual([]);
    expect(await throughPooler.prisma.inTransaction(async (run) => (await run(UNNAMED, [])).rows)).toEqual([]);
  });

  it('pooled without DATABASE_DIRECT_URL: nothing listens, it says so, and live streams learn of other instances by polling', async () => {
    expect(throughPooler.config.databaseDirectUrl).toBeUndefined();
    expect(throughPooler.logs.text).toContain('order events are not listened for');
    const alice = await customer(throughPooler);
    const order = (await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK })).body as { id: string };
    const stream = alice.events(order.id).then((res) => res);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const url = new URL(direct.get(CallbackUrlsService).urlsFor(order.id).successUrl);
    await request(direct.server)
      .post(url.pathname + url.search)
      .send({})
      .expect(200);
    expect(parseSse((await stream).text).map((event) => event.data?.status)).toEqual(['PROCESSING', 'SUCCEEDED']);
  });
});
