import { performance } from 'node:perf_hooks';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Pool, type PoolClient } from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config';
import type { ReplicaSettings } from '../config/replica-config';
import { APP_LOGGER } from '../logging/logging.module';
import { DATABASE_POOL_SIZE, Database } from './database';
import { reportStatementsTo, type StatementListener } from './statement-listeners';
import { lsnValue, PrimaryPositions, replicaStatusAt, type ReplicaStatus } from './replica-lag';
import { PRIMARY_WAL_POSITION, STANDBY_REPLAY_POSITION } from './replica-positions';
import { sendStatement } from './send-statement';
import type { SqlStatement, StatementRow } from './sql-statement';

/** How often the replica's freshness is checked, in the background (never per request). */
export const REPLICA_CHECK_INTERVAL_MS = 1_000;
/** A check (or a finance read's connection) that takes longer finds the replica unreachable. */
export const REPLICA_CONNECT_TIMEOUT_MS = 2_000;

/**
 * Who a list is read for: `finance` reads every user's rows (the finance and admin roles), a
 * `customer` its own. A customer's reads stay on the primary: it sees at once what it just did.
 */
export type ListReader = 'finance' | 'customer';

type LastCheck = { reachable: false } | { reachable: true; freshAsOf: number | undefined };

/**
 * The finance and reporting reads (DATABASE_REPLICA_URL, docs/adr/0011-finance-reads-on-a-replica.md):
 * a repository sends a finance read through `run` (or a list through `runFor` with its reader)
 * instead of Database#run. It runs on the streaming standby while the last background check
 * found it at most DATABASE_REPLICA_MAX_LAG_SECONDS stale (replica-lag.ts), else on the primary; a
 * read that fails on the standby is sent again to the primary. Without a replica (the embedded
 * database, or none configured) every read is the primary's.
 */
@Injectable()
export class ReplicaReads implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly settings?: ReplicaSettings;
  private readonly pool?: Pool;
  private readonly positions: PrimaryPositions;
  private readonly listeners = new Set<StatementListener>();
  private lastCheck?: LastCheck;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private lastState?: ReplicaStatus['state'];

  constructor(
    private readonly primary: Database,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    this.settings = config.get('databaseReplica', { infer: true });
    // Positions are kept well past the bound, so that a standby within it finds one it replayed.
    this.positions = new PrimaryPositions(((this.settings?.maxLagSeconds ?? 0) * 2 + 10) * 1000);
    if (!this.settings) return;
    this.pool = new Pool({
      connectionString: this.settings.url,
      max: DATABASE_POOL_SIZE,
      connectionTimeoutMillis: REPLICA_CONNECT_TIMEOUT_MS,
    });
    // An idle connection the standby dropped (it restarted, or went away) is replaced; without a listener its error would end the process.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => this.instrument(client));
  }

  onApplicationBootstrap(): void {
    if (this.pool) void this.checkEverySecond();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pool?.end();
  }

  /** The replica's state and staleness now, as /health/ready and /metrics show it. */
  status(): ReplicaStatus {
    if (!this.settings) return { state: 'disabled', lagSeconds: null };
    return replicaStatusAt(performance.now(), this.lastCheck, this.settings.maxLagSeconds * 1000);
  }

  /** A finance or reporting read: on the replica while it is fresh enough, else, or when it fails there, on the primary. */
  async run<S extends SqlStatement>(statement: S, values: unknown[]): Promise<StatementRow<S>[]> {
    if (!this.pool || this.status().state !== 'ok') return this.primary.run(statement, values);
    try {
      return await this.runOnReplica(this.pool, statement, values);
    } catch (error) {
      this.logger.warn({ err: error, statement: statement.name }, 'finance read failed on the replica; read on the primary instead');
      return this.primary.run(statement, values);
    }
  }

  /** A list read for `reader`: a finance reader's as `run`, a customer's own on the primary. */
  runFor<S extends SqlStatement>(reader: ListReader, statement: S, values: unknown[]): Promise<StatementRow<S>[]> {
    return reader === 'finance' ? this.run(statement, values) : this.primary.run(statement, values);
  }

  /** Sees every statement sent to the replica (Database#observeStatements sees the primary's); returns the unsubscribe. */
  observeStatements(listener: StatementListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async runOnReplica<S extends SqlStatement>(pool: Pool, statement: S, values: unknown[]): Promise<StatementRow<S>[]> {
    const client = await pool.connect();
    try {
      // Named (each connection of the standby is a session of its own), unnamed through a pooler.
      return (await sendStatement(client, statement, values, this.settings?.pooled ? undefined : statement.name)).rows;
    } finally {
      client.release();
    }
  }

  /** One check, then the next a second after it ends: a slow standby never has checks piling up. */
  private async checkEverySecond(): Promise<void> {
    if (this.stopped) return;
    await this.check();
    this.logStateChange();
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.checkEverySecond(), REPLICA_CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  /** The primary's position first, then the standby's: a standby that has replayed it holds everything the primary had then. */
  private async check(): Promise<void> {
    const pool = this.pool;
    if (!pool) return;
    const primaryReadAt = performance.now();
    const primaryLsn = await this.primary.run(PRIMARY_WAL_POSITION, []).then(
      ([row]) => lsnValue(row.lsn),
      () => undefined,
    );
    if (primaryLsn !== undefined) this.positions.record(primaryReadAt, primaryLsn);
    let timeout: NodeJS.Timeout | undefined;
    try {
      const [standby] = await Promise.race([
        this.runOnReplica(pool, STANDBY_REPLAY_POSITION, []),
        new Promise<never>((_, reject) => {
          timeout = setTimeout(() => reject(new Error('the replica did not answer in time')), REPLICA_CONNECT_TIMEOUT_MS);
        }),
      ]);
      if (!standby.inRecovery || standby.replayLsn === null) {
        // Promoted, or not a standby at all: its data may part from the primary's. Never read there.
        this.lastCheck = { reachable: false };
        return;
      }
      const reading = { replayLsn: lsnValue(standby.replayLsn), replayAgeSeconds: standby.replayAgeSeconds, at: performance.now() };
      this.lastCheck = { reachable: true, freshAsOf: this.positions.freshAsOf(reading) };
    } catch {
      this.lastCheck = { reachable: false };
    } finally {
      clearTimeout(timeout);
    }
  }

  private logStateChange(): void {
    const { state, lagSeconds } = this.status();
    if (state === this.lastState) return;
    const log = state === 'ok' ? this.logger.info.bind(this.logger) : this.logger.warn.bind(this.logger);
    log(
      { replica: state, lagSeconds, maxLagSeconds: this.settings?.maxLagSeconds },
      state === 'ok' ? 'finance reads on the replica' : 'finance reads on the primary',
    );
    this.lastState = state;
  }

  private instrument(client: PoolClient): void {
    // As Database's: a connection that breaks while checked out fails its statement (the read
    // then goes to the primary); pg also emits the error on the client, which must not end the process.
    client.on('error', () => undefined);
    reportStatementsTo(client, this.listeners);
  }
}
