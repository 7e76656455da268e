import { runInNewContext } from 'node:vm';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import type { SqlStatement } from '../../src/database/sql-statement';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

// V8's gc(), without starting jest with --expose-gc: the flag applies to contexts created after it.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options?: { type: 'major' | 'minor' }) => void;

const oldSpaceUsed = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;

/** About a page of orders: 50 rows of some 700 bytes of text each. */
const PAGE_LIKE: SqlStatement = {
  name: 'test_result_lifetime',
  repository: 'test',
  usedBy: 'test',
  text: `SELECT i, repeat(md5(i::text), 10) AS a, repeat(md5((i + 1)::text), 10) AS b FROM generate_series(1, 50) AS i`,
};

/**
 * The rows of a statement sent through `PrismaService.run` die young once the caller drops them.
 * Through pg's promise API they did not: each result survived the young-generation collections
 * after it (about 35 KB per result here, 3 MB over this test) until the next full collection,
 * which made every scavenge copy megabytes and pause 5 to 10 ms while lists were served.
 */
describe('the lifetime of statement results', () => {
  let sandbox: RunningSandbox;
  let service: TestService;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
  });

  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  it('does not promote the rows of finished statements to the old generation', async () => {
    let rowsSeen = 0;
    const runMany = async (times: number) => {
      for (let i = 0; i < times; i++) rowsSeen += (await service.prisma.run<{ a: string }>(PAGE_LIKE, [])).length;
    };
    await runMany(20);
    gc({ type: 'major' });
    gc({ type: 'minor' });
    const before = oldSpaceUsed();
    for (let round = 0; round < 5; round++) {
      await runMany(20);
      gc({ type: 'minor' });
    }
    gc({ type: 'minor' });
    const promoted = oldSpaceUsed() - before;
    expect(rowsSeen).toBe(120 * 50);
    // 100 results of about 35 KB each: promoted, they would be 3 MB or more.
    expect(promoted).toBeLessThan(1024 * 1024);
  });
});
