/**
 * How fast two NTP-disciplined clocks can drift apart, per millisecond elapsed (NTP's slew limit
 * of 500 ppm): an old sample's error bound grows by this much.
 */
const MAX_DRIFT_PER_MS = 500e-6;
/** `Date.now()` counts whole milliseconds, so each of a round trip's two readings may be up to 1 ms early. */
const READING_RESOLUTION_MS = 1;

export interface ClockEstimate {
  /** The database clock minus this process's clock. */
  offsetMs: number;
  /** The true offset lies within `offsetMs ± errorMs`. */
  errorMs: number;
}

interface ClockSample extends ClockEstimate {
  /** This process's clock when the sample was taken. */
  takenAt: number;
}

/**
 * The database clock relative to this process's clock, estimated as NTP does. A round trip that
 * reads the database clock bounds the offset to within half the round trip. The sample with the
 * tightest bound wins, after growing each bound by the drift since its sample was taken. A round
 * trip that waited in the pool's queue has a wide bound and cannot displace a tight one: taken as
 * is, it would place the database clock up to half the wait too far ahead.
 */
export class DatabaseClock {
  private best?: ClockSample;

  /** One round trip: sent at `sentAt`, the database read its clock as `databaseTime`, answered at `receivedAt`. */
  note(sentAt: number, databaseTime: number, receivedAt: number): void {
    // Our clock was set back during the round trip: the reading bounds nothing.
    if (receivedAt < sentAt) return;
    const sample: ClockSample = {
      offsetMs: databaseTime - (sentAt + receivedAt) / 2,
      errorMs: (receivedAt - sentAt) / 2 + READING_RESOLUTION_MS,
      takenAt: receivedAt,
    };
    const current = this.estimate(receivedAt);
    if (!current || sample.errorMs <= current.errorMs) this.best = sample;
  }

  /** The best estimate at `now` (this process's clock), or undefined before the first sample. */
  estimate(now = Date.now()): ClockEstimate | undefined {
    if (!this.best) return undefined;
    const age = Math.max(0, now - this.best.takenAt);
    return { offsetMs: this.best.offsetMs, errorMs: this.best.errorMs + age * MAX_DRIFT_PER_MS };
  }
}
