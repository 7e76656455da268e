/**
 * How stale a streaming standby may be, measured so that it stays right when the primary is quiet.
 *
 * `now() - pg_last_xact_replay_timestamp()` on the standby is the age of the last transaction it
 * replayed: on an idle primary it grows for ever although the standby misses nothing, and right
 * after the first write following a quiet hour it reads "an hour behind". Instead each check reads
 * the primary's WAL position (`pg_current_wal_lsn()`) first, then the standby's replayed position
 * (`pg_last_wal_replay_lsn()`), and keeps the primary's positions of the last checks with the time
 * (this process's monotonic clock) each was read. The standby is "fresh as of" the latest such
 * time whose position it has replayed: it holds everything the primary had then. A caught-up
 * standby is fresh as of this check; an idle primary keeps one position, so it stays fresh. The
 * replay timestamp is used only when the standby is behind every position kept (a standby far
 * behind, or the first check), and then never as fresher than that oldest position.
 *
 * At a read, the standby's staleness is at most `now - freshAsOf`: it grows between checks, so a
 * standby whose checks stop answering (or fall behind) loses the reads by itself.
 */

/** A WAL position as PostgreSQL writes it (`16/B374D848`), as a number. */
export function lsnValue(lsn: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(lsn);
  if (!match) throw new Error(`not a WAL position: ${lsn}`);
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

/** What one check read from the standby. */
export interface StandbyReading {
  /** pg_last_wal_replay_lsn(). */
  replayLsn: bigint;
  /** now() − pg_last_xact_replay_timestamp() on the standby, in seconds; null before it replayed any transaction. */
  replayAgeSeconds: number | null;
  /** When the standby answered (ms, the clock of the positions). */
  at: number;
}

/** The primary's WAL positions of the recent checks, and the freshness of the standby they imply. */
export class PrimaryPositions {
  private readonly positions: { at: number; lsn: bigint }[] = [];

  /** `keepMs`: how long a position is kept; longer than the lag bound, so that a standby within it finds one it replayed. */
  constructor(private readonly keepMs: number) {}

  /** The primary was at `lsn` at `at` (read before the standby is asked). */
  record(at: number, lsn: bigint): void {
    const last = this.positions[this.positions.length - 1];
    // A quiet primary still at the same position: a standby that replayed it is fresh as of now, not as of when it was first reached.
    if (last && last.lsn === lsn) last.at = at;
    else this.positions.push({ at, lsn });
    while (this.positions.length > 1 && this.positions[0].at < at - this.keepMs) this.positions.shift();
  }

  /**
   * The latest time (ms) as of which the standby holds everything the primary had, or undefined
   * when nothing says so (behind every kept position, and no transaction replayed yet).
   */
  freshAsOf(standby: StandbyReading): number | undefined {
    for (let i = this.positions.length - 1; i >= 0; i--) {
      if (this.positions[i].lsn <= standby.replayLsn) return this.positions[i].at;
    }
    if (standby.replayAgeSeconds === null) return undefined;
    const byReplay = standby.at - Math.max(0, standby.replayAgeSeconds) * 1000;
    const oldest = this.positions[0];
    // Behind the oldest kept position: not fresh as of it, whatever the clocks say.
    return oldest ? Math.min(byReplay, oldest.at - 1) : byReplay;
  }
}

/** The replica's state as /health/ready and /metrics name it. */
export const REPLICA_STATES = ['disabled', 'ok', 'lagging', 'unreachable'] as const;
export type ReplicaState = (typeof REPLICA_STATES)[number];

export interface ReplicaStatus {
  state: ReplicaState;
  /** The standby's staleness at most, in seconds (ms precision); null when disabled, unreachable, or not known. */
  lagSeconds: number | null;
}

/**
 * The state at `now` from the last check: unreachable when it failed (or none finished yet);
 * lagging past `maxLagMs` of staleness (`now - freshAsOf`), or when the staleness is not known.
 */
export function replicaStatusAt(
  now: number,
  lastCheck: { reachable: false } | { reachable: true; freshAsOf: number | undefined } | undefined,
  maxLagMs: number,
): ReplicaStatus {
  if (!lastCheck?.reachable) return { state: 'unreachable', lagSeconds: null };
  if (lastCheck.freshAsOf === undefined) return { state: 'lagging', lagSeconds: null };
  const lagMs = Math.max(0, now - lastCheck.freshAsOf);
  // Rounded up to the millisecond: an upper bound stays one, and a standby past the bound never shows it.
  return { state: lagMs > maxLagMs ? 'lagging' : 'ok', lagSeconds: Math.ceil(lagMs) / 1000 };
}
