import fc from 'fast-check';
import { DatabaseClock } from './database-clock';

/**
 * One round trip as this process sees it, for a database clock `trueOffset` ms ahead of ours:
 * it waits `queuedMs` in the pool's queue and `outboundMs` on the way, the database reads its
 * clock, and the answer takes `inboundMs` back. Date.now() truncates to whole milliseconds.
 */
function roundTrip(
  clock: DatabaseClock,
  trueOffset: number,
  sentAt: number,
  trip: { queuedMs: number; outboundMs: number; inboundMs: number },
) {
  const readAt = sentAt + trip.queuedMs + trip.outboundMs;
  const receivedAt = readAt + trip.inboundMs;
  clock.note(Math.floor(sentAt), readAt + trueOffset, Math.floor(receivedAt));
  return receivedAt;
}

const trip = fc.record({
  queuedMs: fc.double({ min: 0, max: 200, noNaN: true }),
  outboundMs: fc.double({ min: 0, max: 5, noNaN: true }),
  inboundMs: fc.double({ min: 0, max: 5, noNaN: true }),
});

describe('DatabaseClock', () => {
  it('knows nothing before its first sample', () => {
    expect(new DatabaseClock().estimate()).toBeUndefined();
  });

  it('for any round trips, the true offset lies within the estimate and its error bound', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -60_000, max: 60_000, noNaN: true }),
        fc.array(fc.tuple(fc.double({ min: 0, max: 10_000, noNaN: true }), trip), { minLength: 1, maxLength: 20 }),
        (trueOffset, trips) => {
          const clock = new DatabaseClock();
          let now = 1_700_000_000_000;
          for (const [pause, each] of trips) now = roundTrip(clock, trueOffset, now + pause, each);
          const estimate = clock.estimate(Math.floor(now))!;
          expect(Math.abs(estimate.offsetMs - trueOffset)).toBeLessThanOrEqual(estimate.errorMs + 1e-6);
        },
      ),
    );
  });

  it('a round trip that waited in the queue does not displace a quick one taken just before', () => {
    const clock = new DatabaseClock();
    // Quick: 1 ms there and back, the clocks agree.
    roundTrip(clock, 0, 1_000, { queuedMs: 0, outboundMs: 0.5, inboundMs: 0.5 });
    // 40 ms in the pool's queue, then read: taken as is, it would put the database clock 20 ms ahead.
    roundTrip(clock, 0, 1_005, { queuedMs: 40, outboundMs: 0.5, inboundMs: 0.5 });
    const estimate = clock.estimate(1_046)!;
    expect(Math.abs(estimate.offsetMs)).toBeLessThanOrEqual(1);
    expect(estimate.errorMs).toBeLessThan(2);
  });

  it('ignores a round trip during which our clock was set back', () => {
    const clock = new DatabaseClock();
    roundTrip(clock, 0, 1_000, { queuedMs: 0, outboundMs: 1, inboundMs: 1 });
    // Answered "before" it was sent: taken as is, its bound would be negative and win forever.
    clock.note(2_000, 1_990, 1_990);
    expect(clock.estimate(2_002)).toEqual({ offsetMs: 0, errorMs: 2 + 1_000 * 500e-6 });
  });

  it('an old sample gives way to a newer one once its bound, grown by the drift since, is wider', () => {
    const clock = new DatabaseClock();
    roundTrip(clock, 0, 0, { queuedMs: 0, outboundMs: 0.5, inboundMs: 0.5 });
    // An hour later the clocks may have drifted 1.8 s apart: a 10 ms round trip now bounds it better.
    roundTrip(clock, 7, 3_600_000, { queuedMs: 0, outboundMs: 5, inboundMs: 5 });
    const estimate = clock.estimate(3_600_010)!;
    expect(estimate.offsetMs).toBeCloseTo(7, 0);
    expect(estimate.errorMs).toBeLessThanOrEqual(6.01);
  });
});
