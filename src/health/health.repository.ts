import { Injectable } from '@nestjs/common';
import { Database } from '../database/database';
import { column, sqlStatement } from '../database/sql-statement';

/** The SQL of HealthRepository, written out (listed in src/queries/health.repository.sql): readiness is probed all day long. */
const repository = 'health.repository';

const PING = sqlStatement(
  repository,
  'ping',
  'health_ping',
  `
  SELECT 1 AS one`,
  { one: column.int4 },
);

const APPLIED_MIGRATIONS = sqlStatement(
  repository,
  'appliedMigrationNames',
  'health_applied_migrations',
  `
  SELECT migration_name::text AS name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
  { name: column.text },
);

@Injectable()
export class HealthRepository {
  constructor(private readonly database: Database) {}

  async ping(): Promise<void> {
    await this.database.run(PING, []);
  }

  /** Names of the migrations recorded as finished (and not rolled back) in _prisma_migrations. */
  async appliedMigrationNames(): Promise<string[]> {
    const rows = await this.database.run(APPLIED_MIGRATIONS, []);
    return rows.map((r) => r.name);
  }
}
