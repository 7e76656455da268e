import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

type PlanNode = { 'Node Type': string; Plans?: PlanNode[] };

function nodeTypes(node: PlanNode): string[] {
  return [node['Node Type'], ...(node.Plans ?? []).flatMap(nodeTypes)];
}

/**
 * Every list filter is served by an index, in keyset order (no sort, no sequential scan), so that
 * a page stays cheap at a million rows. The queries have the shape of the repositories': a filter,
 * the keyset condition, newest first, a limit. Sequential scans, sorts and bitmap scans are
 * priced out of the planner's choices, so that on small test tables a missing or wrongly ordered
 * index still shows as a Seq Scan or a Sort: they remain possible, just never preferred.
 */
describe('list queries and their indexes', () => {
  let sandbox: RunningSandbox;
  let service: TestService;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

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
    const plan = await service.prisma.$transaction(async (tx) => {
      for (const plan of ['seqscan', 'sort', 'bitmapscan']) await tx.$executeRawUnsafe(`SET LOCAL enable_${plan} = off`);
      return tx.$queryRawUnsafe<{ plan: string }[]>(`EXPLAIN (FORMAT JSON) ${sql}`);
    });
    // The QUERY PLAN column is json: the driver hands it over parsed.
    const column = Object.values(plan[0])[0];
    const root = ((typeof column === 'string' ? JSON.parse(column) : column) as { Plan: PlanNode }[])[0].Plan;
    // Sort, Incremental Sort, Seq Scan: each means an index is missing or in the wrong order.
    expect(nodeTypes(root).filter((type) => /Sort|Seq Scan/.test(type))).toEqual([]);
  });
});
