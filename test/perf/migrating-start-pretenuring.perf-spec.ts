import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintToken } from '../../src/auth/token-minter';
import { startChildService, type ChildService } from '../support/child-service';
import { meanPromoted, promotedPerScavenge } from '../support/gc-trace';
import { orderRequest } from '../support/provider-factories';
import { testDatabaseUrl, usingRealPostgres } from '../support/test-database';
import { createRunDatabase } from '../support/test-database-server';
import { nodeScriptCommand } from '../support/start-prod-command';

const JWT_SECRET = 'migrating-start-test-jwt-secret-0123456789';
/** Pages read before and while V8's scavenges are traced: pretenuring shows once the list's code is optimized. */
const WARM_UP_PAGES = 1500;
const MEASURED_PAGES = 1500;

/**
 * V8 counts, per allocation site, how many of its objects survive young-generation collections,
 * and the optimized code of a site whose objects mostly did allocates them straight in the old
 * generation. Applying the migrations at start (`npm start`, `--migrate`) had V8 pretenure the site
 * where pg builds a row; once the list's code was optimized, every row of every page sat in the old
 * generation, dead until the next full collection, keeping its young strings alive through each
 * scavenge: about 1.4 MB promoted per scavenge, scavenges of 3 to 10 ms instead of under 1 ms.
 * `npm start` runs node with `--no-allocation-site-pretenuring`, as every start does (see
 * docs/operations.md and production-pretenuring.perf-spec.ts). Read from V8's own trace of each scavenge (`--trace-gc-nvp`: `promoted=<bytes>`), in an
 * instance started as `npm start` starts it, on a database of its own that it migrates (under
 * PGlite, the embedded one).
 */
describe('an instance that migrated at its start (npm start)', () => {
  it("serves pages of orders without promoting their rows (V8's pretenuring off)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'migrating-start-'));
    const database = usingRealPostgres()
      ? await createRunDatabase(testDatabaseUrl(), `migrating_start_${process.pid}_${Date.now()}`)
      : undefined;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let instance: ChildService | undefined;
    try {
      instance = await startChildService(
        {
          NODE_ENV: 'development',
          LOG_LEVEL: 'warn',
          AUTH_JWT_SECRET: JWT_SECRET,
          // One customer makes the 50 pay-ins the pages read.
          PROVIDER_CUSTOMER_HOURLY_LIMIT: '600',
          ...(database ? { DATABASE_URL: database.url } : { EMBEDDED_DATA_DIR: dataDir }),
        },
        { nodeArgs: ['--trace-gc-nvp', ...nodeScriptCommand('start').nodeArgs], readyPath: '/health/ready', startTimeoutMs: 90_000 },
      );
      const { base, output } = instance;
      const customer = await mintToken({ sub: 'migrating-start-pages', roles: ['customer'], ttl: '1h', secret: JWT_SECRET });
      for (let i = 0; i < 50; i++) {
        const created = await fetch(`${base}/v1/orders`, {
          method: 'POST',
          headers: { authorization: `Bearer ${customer}`, 'content-type': 'application/json', 'idempotency-key': `migrating-start-${i}` },
          body: JSON.stringify(orderRequest({ description: `Order ${i} of the pages` })),
        });
        expect(created.status).toBe(201);
      }
      const readPage = () =>
        new Promise<number>((done, fail) => {
          httpGet(`${base}/v1/orders?limit=50`, { agent, headers: { authorization: `Bearer ${customer}` } }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => done((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { items: unknown[] }).items.length));
          }).on('error', fail);
        });
      expect(await readPage()).toBe(50);
      for (let i = 0; i < WARM_UP_PAGES; i++) await readPage();
      const traceFrom = output().length;
      for (let i = 0; i < MEASURED_PAGES; i++) await readPage();
      const promoted = promotedPerScavenge(output().slice(traceFrom));
      // A page allocates a few hundred KB: the measured pages span dozens of scavenges.
      expect(promoted.length).toBeGreaterThan(10);
      // Pretenured rows: 1.36 to 1.45 MB per scavenge, on either database. Young: a few KB on
      // PostgreSQL (what the request in flight holds), about 250 KB with the embedded database,
      // whose own buffers live in the same process.
      expect(meanPromoted(promoted)).toBeLessThan(512 * 1024);
    } finally {
      agent.destroy();
      instance?.child.kill('SIGTERM');
      await instance?.exited;
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
