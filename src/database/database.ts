import { randomBytes } from 'node:crypto';
import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PrismaPg } from '@prisma/adapter-pg';
import { Pool, type PoolClient } from 'pg';
import { PrismaClient } from '../generated/prisma/client';
import type { AppConfig } from '../config/app-config';
import { inSpan, startStatementSpan } from '../tracing/tracing';
import { sendStatement } from './send-statement';
import type { SqlStatement, StatementRow } from './sql-statement';
import { retryingDeadlock } from './deadlock-retry';
import { reportStatementsTo, type StatementListener } from './statement-listeners';

export const DATABASE_POOL_SIZE = 10;
/**
 * Connections the pool keeps through a quiet spell (pg closes the others after 10 s idle): a
 * frontend's first requests after an idle minute find them open, with their statements prepared,
 * instead of each connecting and preparing again (npm run bench, "The cold start").
 */
export const DATABASE_POOL_KEPT_IDLE = 4;
/** How long a query waits for a connection (a free slot of the pool, or a new one) before it fails: answered 503, never a request hanging forever on a lost database. */
export const DATABASE_CONNECT_TIMEOUT_MS = 10_000;

/** Sends a written-out statement on the connection of a transaction; answers its rows and how many it touched. */
export type TransactionRun = <S extends SqlStatement>(
  statement: S,
  values: unknown[],
) => Promise<{ rows: StatementRow<S>[]; count: number }>;

/**
 * Prepared statement names are per session. The embedded database is one session for every
 * connection of every process using it, so each connection gets names of its own.
 */
const PROCESS_TAG = randomBytes(3).toString('hex');
let connectionCount = 0;

/**
 * The process's way to PostgreSQL: its one pg pool, `run`/`runCounted` for the repositories'
 * written-out statements (sent as named statements), `inTransaction`, and the statement observers.
 * It is still a Prisma client on the same pool (through adapter-pg) only because tests and scripts
 * set up states with `$executeRaw`; `src/` sends nothing through Prisma (ADR 0007).
 *
 * Prisma is never connected eagerly: its first query (or `$connect`) loads its query compiler, tens
 * of MB of WebAssembly and heap, so an instance serving only the written-out paths and the
 * background jobs never loads it. Connecting it early proved nothing about the database either:
 * through adapter-pg, `$connect` opens no connection.
 */
@Injectable()
export class Database extends PrismaClient implements OnApplicationShutdown {
  private readonly pool: Pool;
  private readonly statementNames = new WeakMap<PoolClient, string>();
  private readonly listeners = new Set<StatementListener>();
  private readonly drains: (() => Promise<void>)[] = [];
  /**
   * Through a transaction-mode pooler (`pgbouncer=true`) consecutive statements of one pool
   * connection may reach different server sessions, where a named statement prepared on another
   * does not exist (or exists twice): statements go unnamed, parsed anew each time. Elsewhere they
   * stay named, prepared once per connection.
   */
  private readonly unnamedStatements: boolean;

  constructor(config: ConfigService<AppConfig, true>) {
    const databaseUrl = config.get('databaseUrl', { infer: true });
    if (!databaseUrl) throw new Error('Database needs a database URL (the embedded database is started before the app)');
    const pool = new Pool({
      connectionString: databaseUrl,
      max: DATABASE_POOL_SIZE,
      min: DATABASE_POOL_KEPT_IDLE,
      connectionTimeoutMillis: DATABASE_CONNECT_TIMEOUT_MS,
    });
    super({ adapter: new PrismaPg(pool) });
    this.pool = pool;
    this.unnamedStatements = config.get('databasePooled', { infer: true });
    // An idle connection the server dropped is replaced by the pool; without a listener its error would end the process.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => this.instrument(client));
  }

  // After the HTTP server has closed (requests in flight have finished), not at module destruction.
  async onApplicationShutdown() {
    for (const drain of this.drains.splice(0)) await drain();
    await this.$disconnect();
    await this.pool.end();
  }

  /** Work that must reach the database before it disconnects on a clean shutdown (buffered writes). */
  beforeDisconnect(drain: () => Promise<void>): void {
    this.drains.push(drain);
  }

  /** Sends a written-out statement as a named (prepared) statement, unnamed through a pooler; answers its rows. */
  async run<S extends SqlStatement>(statement: S, values: unknown[]): Promise<StatementRow<S>[]> {
    return (await this.runCounted(statement, values)).rows;
  }

  /** As `run`, with the number of rows the statement touched. */
  async runCounted<S extends SqlStatement>(statement: S, values: unknown[]): Promise<{ rows: StatementRow<S>[]; count: number }> {
    const client = await this.pool.connect();
    try {
      // On its own (autocommit): a statement aborted to break a deadlock was rolled back whole.
      return await retryingDeadlock(() => this.send(client, statement, values));
    } finally {
      client.release();
    }
  }

  /**
   * Runs `work` in one transaction on one connection of the pool, its statements sent through the
   * `run` it is given: committed when `work` resolves, rolled back when it throws. `statementTimeoutMs`
   * bounds each statement of a chore that may run long (the server cancels it, and the transaction
   * rolls back). For repositories.
   */
  inTransaction<T>(work: (run: TransactionRun) => Promise<T>, options: { statementTimeoutMs?: number } = {}): Promise<T> {
    // Traced as one span (BEGIN to COMMIT), its statements its children.
    const span = startStatementSpan('transaction', 'TRANSACTION');
    return span ? inSpan(span, () => this.transaction(work, options)) : this.transaction(work, options);
  }

  private async transaction<T>(work: (run: TransactionRun) => Promise<T>, options: { statementTimeoutMs?: number }): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      if (options.statementTimeoutMs !== undefined) {
        await client.query(`SET LOCAL statement_timeout = ${Math.floor(options.statementTimeoutMs)}`);
      }
      const result = await work((statement, values) => this.send(client, statement, values));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection whose ROLLBACK fails is in an unknown state: it is destroyed, not handed to the next caller.
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /** Sees every statement this process sends through its pool (Prisma's and `run`'s); returns the unsubscribe. */
  observeStatements(listener: StatementListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private send<S extends SqlStatement>(client: PoolClient, statement: S, values: unknown[]) {
    return sendStatement(
      client,
      statement,
      values,
      this.unnamedStatements ? undefined : `${statement.name}_${this.statementNames.get(client)}`,
    );
  }

  private instrument(client: PoolClient): void {
    // A connection that breaks while checked out fails the statement in flight (its caller gets the
    // error, a 503), and pg also emits the error on the client, where the pool listens only while
    // the client is idle: without this listener that emit would end the process. The pool drops
    // the broken client when it is released.
    client.on('error', () => undefined);
    this.statementNames.set(client, `${PROCESS_TAG}${(++connectionCount).toString(36)}`);
    reportStatementsTo(client, this.listeners);
  }
}
