import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { migrationNamesOnDisk } from '../database/migrator';
import type { ReplicaStatus } from '../database/replica-lag';
import { ReplicaReads } from '../database/replica-reads.service';
import { HealthRepository } from './health.repository';

export interface ReadinessReport {
  status: 'ok';
  /** The replica is shown, never required: without it finance reads run on the primary. */
  checks: { database: 'up'; migrations: 'applied'; replica: ReplicaStatus };
}

export class NotReadyError extends DomainError {
  readonly status = 503;
  readonly code = 'not_ready';
  readonly title = 'The service is not ready';
  override readonly headers = { 'retry-after': '5' };
}

@Injectable()
export class HealthService {
  private expectedMigrations?: Promise<string[]>;
  private draining = false;

  constructor(
    private readonly repository: HealthRepository,
    private readonly replica: ReplicaReads,
  ) {}

  /**
   * The instance is shutting down: from now on readiness answers 503 at once, without asking the
   * database, so that the load balancer takes the instance out of rotation while it still serves.
   */
  beginDrain(): void {
    this.draining = true;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** Ready = not shutting down, the database answers and every migration shipped with this build is applied to it. */
  async readiness(): Promise<ReadinessReport> {
    if (this.draining) throw new NotReadyError('The instance is shutting down.');
    try {
      await this.repository.ping();
    } catch {
      throw new NotReadyError('The database is not reachable.');
    }
    this.expectedMigrations ??= migrationNamesOnDisk();
    const [expected, applied] = await Promise.all([
      this.expectedMigrations,
      this.repository.appliedMigrationNames().catch(() => [] as string[]),
    ]);
    const missing = expected.filter((name) => !applied.includes(name));
    if (missing.length > 0) throw new NotReadyError(`Migrations not applied: ${missing.join(', ')}. Run npm run db:migrate.`);
    return { status: 'ok', checks: { database: 'up', migrations: 'applied', replica: this.replica.status() } };
  }
}
