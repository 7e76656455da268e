import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { instantOfLocalTime, IsDateFilter, isTimeZone, parseDateFilter, windowBound } from './date-filter';

const HOUR = 3_600_000;
const iso = (text: string, bound: 'from' | 'to', zone: string) => windowBound(text, bound, zone).toISOString();
/** How long the window `from=day&to=day` is, in hours. */
const hoursOfDay = (day: string, zone: string) =>
  (windowBound(day, 'to', zone).getTime() - windowBound(day, 'from', zone).getTime()) / HOUR;

describe('windowBound', () => {
  it('reads a day from its first moment to the next day’s first moment (excluded), in the zone', () => {
    expect(iso('2026-11-01', 'from', 'UTC')).toBe('2026-11-01T00:00:00.000Z');
    expect(iso('2026-11-01', 'to', 'UTC')).toBe('2026-11-02T00:00:00.000Z');
    expect(iso('2026-11-01', 'from', 'Africa/Douala')).toBe('2026-10-31T23:00:00.000Z');
    expect(iso('2026-11-01', 'to', 'Africa/Douala')).toBe('2026-11-01T23:00:00.000Z');
    expect(iso('2026-12-31', 'to', 'UTC')).toBe('2027-01-01T00:00:00.000Z');
    expect(iso('2028-02-28', 'to', 'UTC')).toBe('2028-02-29T00:00:00.000Z');
  });

  it('keeps a moment with an offset as written, and reads one without an offset in the zone', () => {
    expect(iso('2026-11-01T08:30:00Z', 'from', 'Africa/Douala')).toBe('2026-11-01T08:30:00.000Z');
    expect(iso('2026-11-01T08:30:00Z', 'to', 'Africa/Douala')).toBe('2026-11-01T08:30:00.000Z');
    expect(iso('2026-11-01T08:30:00.5+05:30', 'from', 'UTC')).toBe('2026-11-01T03:00:00.500Z');
    expect(iso('2026-11-01T08:30-03:00', 'to', 'UTC')).toBe('2026-11-01T11:30:00.000Z');
    expect(iso('2026-11-01T08:30', 'from', 'Africa/Douala')).toBe('2026-11-01T07:30:00.000Z');
    expect(iso('2026-11-01T08:30:15', 'to', 'Europe/Paris')).toBe('2026-11-01T07:30:15.000Z');
  });

  it('makes a day 23 hours long when the clocks go forward, 25 when they go back', () => {
    expect(hoursOfDay('2026-03-29', 'Europe/Paris')).toBe(23);
    expect(iso('2026-03-29', 'from', 'Europe/Paris')).toBe('2026-03-28T23:00:00.000Z');
    expect(iso('2026-03-29', 'to', 'Europe/Paris')).toBe('2026-03-29T22:00:00.000Z');
    expect(hoursOfDay('2026-10-25', 'Europe/Paris')).toBe(25);
    // The requirement's own example: 1 November 2026 is the day New York leaves summer time.
    expect(hoursOfDay('2026-11-01', 'America/New_York')).toBe(25);
    expect(iso('2026-11-01', 'from', 'America/New_York')).toBe('2026-11-01T04:00:00.000Z');
    expect(iso('2026-11-01', 'to', 'America/New_York')).toBe('2026-11-02T05:00:00.000Z');
    expect(hoursOfDay('2026-11-02', 'America/New_York')).toBe(24);
  });

  it('starts a day whose midnight is skipped when the clocks resume', () => {
    // Chile moves from 00:00 to 01:00 on 6 September 2026.
    expect(iso('2026-09-06', 'from', 'America/Santiago')).toBe('2026-09-06T04:00:00.000Z');
    expect(iso('2026-09-05', 'to', 'America/Santiago')).toBe('2026-09-06T04:00:00.000Z');
    expect(hoursOfDay('2026-09-06', 'America/Santiago')).toBe(23);
  });

  it('reads a wall-clock time the clocks skip as later by the gap, and one they repeat as its first occurrence', () => {
    expect(iso('2026-03-29T02:30', 'from', 'Europe/Paris')).toBe('2026-03-29T01:30:00.000Z');
    expect(iso('2026-10-25T02:30', 'from', 'Europe/Paris')).toBe('2026-10-25T00:30:00.000Z');
  });

  it('gives back the instant of any wall-clock time that exists once, in any zone', () => {
    const zones = ['UTC', 'Europe/Paris', 'America/New_York', 'Africa/Douala', 'Asia/Kolkata', 'Australia/Lord_Howe', 'America/Santiago'];
    const local = new Map(
      zones.map((zone) => [zone, new Intl.DateTimeFormat('sv-SE', { timeZone: zone, dateStyle: 'short', timeStyle: 'medium' })]),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: Date.UTC(1990, 0, 1) / 1000, max: Date.UTC(2060, 0, 1) / 1000 }),
        (zone, seconds) => {
          const instant = seconds * 1000;
          const text = local.get(zone)!.format(new Date(instant)).replace(' ', 'T');
          const back = windowBound(text, 'from', zone).getTime();
          // A time repeated when the clocks go back is read as its first occurrence: at most the change earlier.
          expect(back <= instant && instant - back <= HOUR).toBe(true);
          if (back !== instant) expect(local.get(zone)!.format(new Date(back))).toBe(local.get(zone)!.format(new Date(instant)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('handles the first and last days a four-digit year allows', () => {
    expect(iso('0001-01-01', 'from', 'UTC')).toBe('0001-01-01T00:00:00.000Z');
    expect(windowBound('9999-12-31', 'to', 'UTC').getTime()).toBe(Date.UTC(9999, 11, 31) + 24 * HOUR);
    expect(instantOfLocalTime({ year: 50, month: 6, day: 1, hour: 0, minute: 0, second: 0, millisecond: 0 }, 'UTC').getUTCFullYear()).toBe(
      50,
    );
  });
});

describe('parseDateFilter', () => {
  it.each([
    '2026-11-01',
    '2028-02-29',
    '2026-11-01T08:30',
    '2026-11-01T08:30:59',
    '2026-11-01T08:30:00.123Z',
    '2026-11-01T08:30:00z',
    '2026-11-01T23:59:59-11:30',
  ])('accepts %s', (text) => expect(parseDateFilter(text)).toBeDefined());

  it.each([
    '2026-02-30',
    '2026-02-29',
    '2026-04-31',
    '2026-13-01',
    '2026-00-10',
    '0000-01-01',
    '2026-11-01T24:00',
    '2026-11-01T23:60',
    '2026-11-01T23:59:60',
    '2026-11-01T08:30+24:00',
    '2026-11-01T08:30+01:60',
    '2026-11-01 08:30',
    '2026-11-01T08',
    '20261101',
    '+275760-01-01T00:00:00Z',
    '2026-11-01\u0000',
    'yesterday',
    '',
  ])('refuses %j', (text) => expect(parseDateFilter(text)).toBeUndefined());
});

describe('@IsDateFilter()', () => {
  class Query {
    @IsDateFilter()
    from?: string;
  }

  it('names the field and shows both spellings when a date does not exist', () => {
    const [error] = validateSync(plainToInstance(Query, { from: '2026-02-30' }));
    expect(error.property).toBe('from');
    expect(Object.values(error.constraints!)).toEqual([
      'from must be a day (2026-11-01) or a moment (2026-11-01T08:30:00Z) that exists on the calendar',
    ]);
    expect(validateSync(plainToInstance(Query, { from: '2026-11-01' }))).toEqual([]);
    expect(validateSync(plainToInstance(Query, { from: ['2026-11-01'] }))).toHaveLength(1);
  });
});

describe('isTimeZone', () => {
  it('knows IANA names and refuses others', () => {
    expect(['UTC', 'Africa/Douala', 'Europe/Paris', 'America/New_York'].every(isTimeZone)).toBe(true);
    expect(['Mars/Olympus', 'CEST+1', '', 'Europe/Paris\u0000'].some(isTimeZone)).toBe(false);
    // UTC offsets are not IANA names: refused on every Node.js (Node 24's Intl accepts them as zones).
    expect(['+01:00', '-05:30', '+0100', '+01'].some(isTimeZone)).toBe(false);
  });
});
