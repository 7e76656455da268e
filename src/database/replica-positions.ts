import { column, sqlStatement } from './sql-statement';

/** The statements of the replica's freshness check (listed in src/queries/replica-positions.sql), one pair a second. */
const repository = 'replica-positions';

/** On the primary, read first: where its WAL is written up to. */
export const PRIMARY_WAL_POSITION = sqlStatement(
  repository,
  'ReplicaReads.check',
  'replica_primary_wal_position',
  `
  SELECT pg_current_wal_lsn()::text AS lsn`,
  { lsn: column.text },
);

/**
 * On the standby: whether it is one, the position it has replayed up to, and the age of the last
 * transaction it replayed (by its own clock against the primary's commit time; null before any).
 */
export const STANDBY_REPLAY_POSITION = sqlStatement(
  repository,
  'ReplicaReads.check',
  'replica_standby_replay_position',
  `
  SELECT pg_is_in_recovery() AS "inRecovery", pg_last_wal_replay_lsn()::text AS "replayLsn",
    extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 AS "replayAgeSeconds"`,
  { inRecovery: column.bool, replayLsn: column.text.orNull, replayAgeSeconds: column.float8.orNull },
);
