import { randomUUID } from 'node:crypto';
import { column, sqlStatement } from '../../src/database/sql-statement';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

const INSERT_TOKEN_ROW = sqlStatement(
  'in-transaction.e2e-spec',
  'test',
  'test_in_transaction_insert',
  `
  INSERT INTO provider_tokens (cache_key, updated_at) VALUES ($1, now())`,
);
const COUNT_TOKEN_ROWS = sqlStatement(
  'in-transaction.e2e-spec',
  'test',
  'test_in_transaction_count',
  `
  SELECT count(*)::int AS count FROM provider_tokens WHERE cache_key = $1`,
  { count: column.int4 },
);

describe('Database.inTransaction', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  const rowsOf = async (key: string) => (await service.prisma.run(COUNT_TOKEN_ROWS, [key]))[0].count;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  it('commits what `work` wrote when it resolves, and answers what it returned', async () => {
    const key = `tx-${randomUUID()}`;
    const answer = await service.prisma.inTransaction(async (run) => (await run(INSERT_TOKEN_ROW, [key])).count);
    expect(answer).toBe(1);
    expect(await rowsOf(key)).toBe(1);
  });

  it('rolls back what `work` wrote when it throws, rethrows, and leaves the pool usable', async () => {
    const key = `tx-${randomUUID()}`;
    const failure = new Error('work failed');
    await expect(
      service.prisma.inTransaction(async (run) => {
        await run(INSERT_TOKEN_ROW, [key]);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await rowsOf(key)).toBe(0);
  });

  it('rolls back after a statement the database refused (the transaction is aborted, not reused)', async () => {
    const key = `tx-${randomUUID()}`;
    await expect(
      service.prisma.inTransaction(async (run) => {
        await run(INSERT_TOKEN_ROW, [key]);
        await run(INSERT_TOKEN_ROW, [key]); // the same primary key
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await rowsOf(key)).toBe(0);
    await service.prisma.inTransaction((run) => run(INSERT_TOKEN_ROW, [key]));
    expect(await rowsOf(key)).toBe(1);
  });
});
