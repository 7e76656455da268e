import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigService } from '@nestjs/config';
import pino from 'pino';
import type { AppConfig } from '../config/app-config';
import type { Database } from './database';
import { PRIMARY_WAL_POSITION } from './replica-positions';
import { ReplicaReads } from './replica-reads.service';
import { column, sqlStatement, type SqlStatement } from './sql-statement';

const LIST = sqlStatement('replica-reads.spec', 'test', 'test_replica_reads_list', 'SELECT 1 AS one', { one: column.int4 });

/** The primary: answers every statement, the WAL position statement with a position. */
function fakePrimary() {
  const sent: string[] = [];
  const primary = {
    run: (statement: SqlStatement) => {
      sent.push(statement.name);
      return Promise.resolve(statement === PRIMARY_WAL_POSITION ? [{ lsn: '0/3000000' }] : [{ one: 1 }]);
    },
  };
  return { primary: primary as unknown as Database, sent };
}

const readsWith = (primary: Database, databaseReplica: AppConfig['databaseReplica']) =>
  new ReplicaReads(primary, new ConfigService<AppConfig, true>({ databaseReplica }), pino({ level: 'silent' }));

describe('ReplicaReads', () => {
  it('without a replica (the default, and the embedded database), is disabled and reads everything on the primary', async () => {
    const { primary, sent } = fakePrimary();
    const reads = readsWith(primary, undefined);
    reads.onApplicationBootstrap();
    expect(reads.status()).toEqual({ state: 'disabled', lagSeconds: null });
    await expect(reads.run(LIST, [])).resolves.toEqual([{ one: 1 }]);
    await expect(reads.runFor('finance', LIST, [])).resolves.toEqual([{ one: 1 }]);
    await expect(reads.runFor('customer', LIST, [])).resolves.toEqual([{ one: 1 }]);
    // No background check either: nothing but the three reads reached the primary.
    expect(sent).toEqual(['test_replica_reads_list', 'test_replica_reads_list', 'test_replica_reads_list']);
    await reads.onApplicationShutdown();
  });

  describe('with a replica that cannot be used', () => {
    let server: Server | undefined;
    const sockets = new Set<Socket>();
    afterEach(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
      server = undefined;
    });

    /** A port that accepts connections and never answers: PostgreSQL's startup never completes. */
    const silentPort = () =>
      new Promise<number>((done) => {
        server = createServer((socket) => void sockets.add(socket)).listen(0, '127.0.0.1', () =>
          done((server!.address() as { port: number }).port),
        );
      });

    it('finds a refused replica unreachable and reads on the primary', async () => {
      const { primary, sent } = fakePrimary();
      // Port 1 on loopback: nothing listens there, the connection is refused at once.
      const reads = readsWith(primary, { url: 'postgresql://reader@127.0.0.1:1/bff', maxLagSeconds: 5, pooled: false });
      try {
        expect(reads.status().state).toBe('unreachable');
        reads.onApplicationBootstrap();
        await sleep(300);
        expect(sent).toContain(PRIMARY_WAL_POSITION.name);
        expect(reads.status()).toEqual({ state: 'unreachable', lagSeconds: null });
        await expect(reads.run(LIST, [])).resolves.toEqual([{ one: 1 }]);
      } finally {
        await reads.onApplicationShutdown();
      }
    });

    it('gives up on a replica that never answers within 2 s, and the finance reads never wait for it', async () => {
      const { primary, sent } = fakePrimary();
      const reads = readsWith(primary, {
        url: `postgresql://reader@127.0.0.1:${await silentPort()}/bff`,
        maxLagSeconds: 5,
        pooled: false,
      });
      try {
        reads.onApplicationBootstrap();
        const began = Date.now();
        await expect(reads.run(LIST, [])).resolves.toEqual([{ one: 1 }]);
        expect(Date.now() - began).toBeLessThan(100);
        // The first check gives up after 2 s, and the next starts a second later: checks never pile up behind a silent replica.
        const checks = () => sent.filter((name) => name === PRIMARY_WAL_POSITION.name).length;
        while (checks() < 2 && Date.now() - began < 10_000) await sleep(50);
        expect([checks(), reads.status().state]).toEqual([2, 'unreachable']);
        expect(Date.now() - began).toBeGreaterThanOrEqual(2_900);
      } finally {
        await reads.onApplicationShutdown();
      }
    });
  });
});
