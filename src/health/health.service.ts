import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { migrationNamesOnDisk } from '../database/migrator';
import { HealthRepository } from './health.repository';

export interface ReadinessReport {
  status: 'ok';
  checks: { database: 'up'; migrations: 'applied' };
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

  constructor(private readonly repository: HealthRepository) {}

  /** Ready = the database answers and every migration shipped with this build is applied to it. */
  async readiness(): Promise<ReadinessReport> {
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
    return { status: 'ok', checks: { database: 'up', migrations: 'applied' } };
  }
}
