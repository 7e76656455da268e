import fc from 'fast-check';
import { lsnValue, PrimaryPositions, replicaStatusAt } from './replica-lag';

const MAX_LAG_MS = 5_000;
const KEEP_MS = 20_000;

describe('lsnValue', () => {
  it('reads PostgreSQL\'s "high/low" hexadecimal WAL positions as one number, in their order', () => {
    fc.assert(
      fc.property(fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff }), (high, low) => {
        const text = `${high.toString(16).toUpperCase()}/${low.toString(16).toUpperCase()}`;
        expect(lsnValue(text)).toBe(BigInt(high) * 2n ** 32n + BigInt(low));
      }),
    );
    expect(lsnValue('0/3000148') < lsnValue('1/0')).toBe(true);
    expect(() => lsnValue('')).toThrow(/not a WAL position/);
  });
});

describe('PrimaryPositions: how stale the standby may be', () => {
  it('stays fresh while the primary is quiet, however long ago the standby replayed its last transaction', () => {
    // What now() - pg_last_xact_replay_timestamp() gets wrong: an hour without writes is not an hour behind.
    const positions = new PrimaryPositions(KEEP_MS);
    for (let at = 0; at <= 60_000; at += 1_000) positions.record(at, lsnValue('0/5000000'));
    const freshAsOf = positions.freshAsOf({ replayLsn: lsnValue('0/5000000'), replayAgeSeconds: 3_600, at: 60_010 });
    expect(freshAsOf).toBe(60_000);
    expect(replicaStatusAt(60_400, { reachable: true, freshAsOf }, MAX_LAG_MS)).toEqual({ state: 'ok', lagSeconds: 0.4 });
  });

  it('after a quiet hour, a standby a moment behind the first write is a second stale, not an hour', () => {
    const positions = new PrimaryPositions(KEEP_MS);
    positions.record(0, lsnValue('0/5000000'));
    positions.record(1_000, lsnValue('0/5000400'));
    const freshAsOf = positions.freshAsOf({ replayLsn: lsnValue('0/5000000'), replayAgeSeconds: 3_600, at: 1_005 });
    expect(freshAsOf).toBe(0);
    expect(replicaStatusAt(1_010, { reachable: true, freshAsOf }, MAX_LAG_MS).state).toBe('ok');
  });

  it('finds a standby whose replay is paused lagging once the primary has moved on past the bound', () => {
    const positions = new PrimaryPositions(KEEP_MS);
    let lsn = lsnValue('0/5000000');
    for (let at = 0; at <= 10_000; at += 1_000) positions.record(at, (lsn += 100n));
    const paused = { replayLsn: lsnValue('0/5000000') + 300n, replayAgeSeconds: 7, at: 10_005 };
    const freshAsOf = positions.freshAsOf(paused);
    expect(freshAsOf).toBe(2_000);
    expect(replicaStatusAt(7_000, { reachable: true, freshAsOf }, MAX_LAG_MS).state).toBe('ok');
    expect(replicaStatusAt(10_005, { reachable: true, freshAsOf }, MAX_LAG_MS)).toEqual({ state: 'lagging', lagSeconds: 8.005 });
  });

  it('falls back to the replay timestamp only behind every kept position, and then never fresher than the oldest', () => {
    const positions = new PrimaryPositions(KEEP_MS);
    positions.record(50_000, lsnValue('0/9000000'));
    expect(positions.freshAsOf({ replayLsn: lsnValue('0/1000000'), replayAgeSeconds: 30, at: 50_010 })).toBe(20_010);
    // The standby's clock behind the primary's would make it look fresher than it can be.
    expect(positions.freshAsOf({ replayLsn: lsnValue('0/1000000'), replayAgeSeconds: -3, at: 50_010 })).toBe(49_999);
    expect(positions.freshAsOf({ replayLsn: lsnValue('0/1000000'), replayAgeSeconds: null, at: 50_010 })).toBeUndefined();
  });

  it('forgets positions older than it keeps, but always keeps the latest', () => {
    const positions = new PrimaryPositions(KEEP_MS);
    positions.record(0, 100n);
    positions.record(1_000, 200n);
    positions.record(30_000, 300n);
    // 100 and 200 are forgotten: a standby at 200 is behind every kept position.
    expect(positions.freshAsOf({ replayLsn: 200n, replayAgeSeconds: null, at: 30_001 })).toBeUndefined();
    expect(positions.freshAsOf({ replayLsn: 300n, replayAgeSeconds: null, at: 30_001 })).toBe(30_000);
  });

  it('never says the standby is fresher than it is, whatever the writes, the checks and where replay stopped', () => {
    // The primary's history: writes at increasing times, each moving its position on. Checks read
    // its position at times of their own; the standby has replayed the first `replayed` writes.
    // It then truly holds everything the primary had before the next write: freshAsOf must be earlier.
    const history = fc
      .uniqueArray(fc.integer({ min: 1, max: 60_000 }), { minLength: 1, maxLength: 40 })
      .map((times) => times.sort((a, b) => a - b));
    fc.assert(
      fc.property(history, history, fc.nat(), (writes, checks, replayedSeed) => {
        const replayed = replayedSeed % (writes.length + 1);
        const positionAt = (at: number) => BigInt(writes.filter((w) => w <= at).length);
        const positions = new PrimaryPositions(KEEP_MS);
        for (const at of checks) positions.record(at, positionAt(at));
        const last = checks[checks.length - 1];
        const freshAsOf = positions.freshAsOf({ replayLsn: BigInt(replayed), replayAgeSeconds: null, at: last });
        const nextWrite = writes[replayed] ?? Infinity;
        if (freshAsOf !== undefined) expect(freshAsOf).toBeLessThan(nextWrite);
        // And a standby holding every write the last check saw is fresh as of that check.
        if (positionAt(last) <= BigInt(replayed)) expect(freshAsOf).toBe(last);
      }),
    );
  });
});

describe('replicaStatusAt', () => {
  it('is unreachable before any check and after a failed one, lagging when the staleness is not known', () => {
    expect(replicaStatusAt(0, undefined, MAX_LAG_MS)).toEqual({ state: 'unreachable', lagSeconds: null });
    expect(replicaStatusAt(0, { reachable: false }, MAX_LAG_MS)).toEqual({ state: 'unreachable', lagSeconds: null });
    expect(replicaStatusAt(0, { reachable: true, freshAsOf: undefined }, MAX_LAG_MS)).toEqual({ state: 'lagging', lagSeconds: null });
  });

  it('grows the staleness between checks: a standby whose checks stop answering loses the reads by itself', () => {
    const check = { reachable: true as const, freshAsOf: 1_000 };
    expect(replicaStatusAt(6_000, check, MAX_LAG_MS).state).toBe('ok');
    expect(replicaStatusAt(6_001, check, MAX_LAG_MS)).toEqual({ state: 'lagging', lagSeconds: 5.001 });
  });
});
