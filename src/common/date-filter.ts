import { ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * The `from` and `to` filters of the lists, reports and exports: a day (`2026-11-01`) or a moment
 * (`2026-11-01T08:30:00Z`, `2026-11-01T08:30+01:00`, or `2026-11-01T08:30` without an offset), read
 * in the reports' time zone (REPORTS_TIMEZONE, an IANA name) when they name no offset. A window is
 * half-open, [from, to): `from=2026-11-01` starts at that day's first moment, `to=2026-11-01` ends at
 * the next day's first moment (exclusive), so that it includes all of that day. A day is 23 or 25
 * hours long when the clocks change; its first moment is midnight, or the first moment after it
 * when midnight itself does not exist that day.
 */
const DATE_OR_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))?)?$/;

/** The example every description and error message shows. */
export const DATE_FILTER_EXAMPLES = { day: '2026-11-01', moment: '2026-11-01T08:30:00Z' } as const;

interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

/** A date filter as written: a day, or a moment with or without its UTC offset (minutes). */
type DateFilter = { kind: 'day'; local: LocalTime } | { kind: 'moment'; local: LocalTime; offsetMinutes?: number };

/** `text` as a day or a moment that exists on the calendar (no 2026-02-30, no 24:00); undefined otherwise. */
export function parseDateFilter(text: string): DateFilter | undefined {
  const match = DATE_OR_DATE_TIME.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction, zulu, sign, offsetHours, offsetMinutes] = match;
  const local: LocalTime = {
    year: Number(year),
    month: Number(month),
    day: Number(day),
    hour: Number(hour ?? 0),
    minute: Number(minute ?? 0),
    second: Number(second ?? 0),
    millisecond: Number((fraction ?? '0').padEnd(3, '0').slice(0, 3)),
  };
  if (local.year < 1 || local.month < 1 || local.month > 12 || local.day < 1 || local.day > daysInMonth(local.year, local.month))
    return undefined;
  if (local.hour > 23 || local.minute > 59 || local.second > 59) return undefined;
  if (hour === undefined) return { kind: 'day', local };
  if (zulu) return { kind: 'moment', local, offsetMinutes: 0 };
  if (sign === undefined) return { kind: 'moment', local };
  if (Number(offsetHours) > 23 || Number(offsetMinutes) > 59) return undefined;
  return { kind: 'moment', local, offsetMinutes: (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) };
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** The local time as if it were UTC, in milliseconds (years below 100 too, which Date.UTC would shift). */
function asUtc(local: LocalTime): number {
  const date = new Date(Date.UTC(2000, local.month - 1, local.day, local.hour, local.minute, local.second, local.millisecond));
  date.setUTCFullYear(local.year);
  return date.getTime();
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone: building one is far dearer than using it. */
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The zone's offset from UTC at `instant`, in milliseconds (local time − UTC), to the second. */
function offsetAt(instant: number, timeZone: string): number {
  const parts: Record<string, string> = {};
  for (const { type, value } of formatterFor(timeZone).formatToParts(new Date(instant))) parts[type] = value;
  const year = parts.era === 'BC' || parts.era === 'B' ? 1 - Number(parts.year) : Number(parts.year);
  const local = asUtc({
    year,
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    millisecond: 0,
  });
  return local - (instant - (((instant % 1000) + 1000) % 1000));
}

/**
 * The instant a wall-clock time of `timeZone` names. When the clocks go back it names two: the
 * earlier. When they go forward it names none: the time is moved forward by the gap (02:30 on a
 * 02:00→03:00 night is 03:30), so a day whose midnight is skipped starts when the clocks resume.
 */
export function instantOfLocalTime(local: LocalTime, timeZone: string): Date {
  const wall = asUtc(local);
  const DAY = 86_400_000;
  const before = offsetAt(wall - DAY, timeZone);
  const after = offsetAt(wall + DAY, timeZone);
  if (before === after) return new Date(wall - before);
  const names = (instant: number) => offsetAt(instant, timeZone) === wall - instant;
  const candidates = [wall - before, wall - after].filter(names).sort((a, b) => a - b);
  return new Date(candidates[0] ?? wall - before);
}

/** Whether `name` is a time zone this runtime knows (IANA names such as `Africa/Douala`, or `UTC`). */
export function isTimeZone(name: string): boolean {
  // Node 24's Intl also takes a UTC offset (`+01:00`) as a zone, Node 20's refuses it: an IANA name
  // on every runtime, so that one configuration starts on both.
  if (/^[+-]/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * The instant a window bound means: `from` a day's first moment, `to` the first moment of the next
 * day (the bound is exclusive); a moment as written, in `timeZone` when it names no offset.
 * `text` must have passed `@IsDateFilter()`.
 */
export function windowBound(text: string, bound: 'from' | 'to', timeZone: string): Date {
  const filter = parseDateFilter(text);
  if (!filter) throw new Error(`not a date filter: ${text}`);
  if (filter.kind === 'moment')
    return filter.offsetMinutes === undefined
      ? instantOfLocalTime(filter.local, timeZone)
      : new Date(asUtc(filter.local) - filter.offsetMinutes * 60_000);
  const day = filter.local;
  if (bound === 'from') return instantOfLocalTime(day, timeZone);
  const next = new Date(asUtc(day) + 86_400_000);
  return instantOfLocalTime({ ...day, year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate() }, timeZone);
}

/** `from`/`to` validation: a day or a moment that exists; the 400 names the field. */
export function IsDateFilter(validationOptions?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isDateFilter',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && value.length <= 40 && parseDateFilter(value) !== undefined,
        defaultMessage: (args) =>
          `${args?.property ?? 'the date'} must be a day (${DATE_FILTER_EXAMPLES.day}) or a moment (${DATE_FILTER_EXAMPLES.moment}) that exists on the calendar`,
      },
    },
    validationOptions,
  );
}
