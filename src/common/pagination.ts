import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { DATE_FILTER_EXAMPLES, IsDateFilter, windowBound } from './date-filter';
import { ValidationFailedError } from './domain-error';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `?limit=&cursor=` of every list: keyset pagination, newest first. */
export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}

/**
 * `?from=&to=`: a half-open time window [from, to) on the list's own time (created, received). Each
 * is a day or a moment (src/common/date-filter.ts), read in REPORTS_TIMEZONE when it names no offset.
 */
export class PeriodQueryDto {
  @ApiPropertyOptional({
    description: `From this day's first moment, or this moment on, in the reports' time zone (REPORTS_TIMEZONE) unless an offset is given: e.g. ${DATE_FILTER_EXAMPLES.day} or ${DATE_FILTER_EXAMPLES.moment}`,
  })
  @IsOptional()
  @IsDateFilter()
  from?: string;

  @ApiPropertyOptional({
    description: `Up to the end of this day (${DATE_FILTER_EXAMPLES.day}: all of that day included), or before this moment (${DATE_FILTER_EXAMPLES.moment}, excluded), in the reports' time zone unless an offset is given`,
  })
  @IsOptional()
  @IsDateFilter()
  to?: string;
}

/** A list query: a time window and a page. */
export class PagedPeriodQueryDto extends IntersectionType(PeriodQueryDto, PageQueryDto) {}

/** The window a query names, as instants: a day in `timeZone` (REPORTS_TIMEZONE) from its first moment to the next day's. */
export function periodOf(query: PeriodQueryDto, timeZone: string): { from?: Date; to?: Date } {
  return {
    from: query.from ? windowBound(query.from, 'from', timeZone) : undefined,
    to: query.to ? windowBound(query.to, 'to', timeZone) : undefined,
  };
}

/** A position in a list sorted by (time, id) descending. */
export interface KeysetPosition {
  at: Date;
  id: string;
}

/** What a service asks a repository for: `limit` rows after `after` (from the start without it), newest first. */
export interface PageRequest {
  limit: number;
  after?: KeysetPosition;
}

/** The keyset position of a row; its time a Date, or the ISO text PostgreSQL wrote (see LIST_ORDERS). */
export const positionOf = (row: { createdAt: Date | string; id: string }): KeysetPosition => ({
  at: typeof row.createdAt === 'string' ? new Date(row.createdAt) : row.createdAt,
  id: row.id,
});

/** `?cursor=` as a position: none for the first page, 400 for a cursor this API did not write. */
export function afterCursor(cursor: string | undefined): KeysetPosition | undefined {
  return cursor ? decodeCursor(cursor) : undefined;
}

export function encodeCursor(position: KeysetPosition): string {
  return Buffer.from(`${position.at.toISOString()}|${position.id}`).toString('base64url');
}

/** The instants a cursor may name: what PostgreSQL's timestamptz and a four-digit ISO year both hold. */
const EARLIEST_CURSOR_TIME = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST_CURSOR_TIME = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * The position a cursor names, or 400: only the exact spelling `encodeCursor` writes is a cursor
 * (a millisecond ISO instant between years 1 and 9999, then a UUID), so no other date spelling,
 * out-of-range year or stray character ever reaches the database.
 */
export function decodeCursor(cursor: string): KeysetPosition {
  const [at, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const date = new Date(at ?? '');
  const time = date.getTime();
  const valid =
    rest.length === 0 &&
    !!id &&
    UUID_PATTERN.test(id) &&
    time >= EARLIEST_CURSOR_TIME &&
    time <= LATEST_CURSOR_TIME &&
    date.toISOString() === at &&
    encodeCursor({ at: date, id }) === cursor;
  if (!valid) throw new ValidationFailedError([{ field: 'cursor', message: 'cursor is not one this API returned' }]);
  return { at: date, id };
}

/** Cursor of a list the provider gives whole (card transactions): an offset into it. */
export function encodeOffsetCursor(offset: number): string {
  return Buffer.from(`offset:${offset}`).toString('base64url');
}

export function decodeOffsetCursor(cursor: string): number {
  const match = /^offset:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new ValidationFailedError([{ field: 'cursor', message: 'cursor is not one this API returned' }]);
  return Number(match[1]);
}

/**
 * Cuts a page out of rows fetched with `limit + 1`: the extra row only says whether there is a
 * next page, whose cursor is the last row kept.
 */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  positionOf: (row: R) => KeysetPosition,
  toItem: (row: R) => T,
): { items: T[]; nextCursor: string | null } {
  const kept = rows.slice(0, limit);
  const last = kept[kept.length - 1];
  return { items: kept.map(toItem), nextCursor: rows.length > limit && last ? encodeCursor(positionOf(last)) : null };
}

/** Documents `{ items, nextCursor }` in Swagger for one item type. */
export class PageDto {
  @ApiProperty({
    example: 'MjAyNi0xMS0yM1QwOToxNTowMC4wMDBafDhkM2U1ZjBhLTFiMmMtNGQ2ZS05ZjcwLWExYjJjM2Q0ZTVmNg',
    nullable: true,
    type: String,
    description: 'Pass as `cursor` for the next page; null on the last page',
  })
  nextCursor: string | null;
}
