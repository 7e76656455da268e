import { ValidationFailedError } from './domain-error';
import { afterCursor, decodeOffsetCursor, encodeCursor, encodeOffsetCursor, positionOf, toPage } from './pagination';

const id = '0f337719-beae-4580-8ccb-ad6a610d08cf';
const createdAt = new Date('2026-11-23T10:00:00.123Z');

describe('afterCursor', () => {
  it('no cursor is the first page; a cursor is the position it was written from', () => {
    expect(afterCursor(undefined)).toBeUndefined();
    expect(afterCursor('')).toBeUndefined();
    expect(afterCursor(encodeCursor(positionOf({ createdAt, id })))).toEqual({ at: createdAt, id });
  });

  it('a cursor this API did not write is a 400 on `cursor`', () => {
    expect(() => afterCursor(encodeOffsetCursor(3))).toThrow(ValidationFailedError);
  });
});

describe('offset cursors (lists the provider gives whole)', () => {
  it('read back what was written', () => {
    expect(decodeOffsetCursor(encodeOffsetCursor(0))).toBe(0);
    expect(decodeOffsetCursor(encodeOffsetCursor(150))).toBe(150);
  });

  it.each([
    ['a keyset cursor', encodeCursor({ at: createdAt, id })],
    ['a negative offset', Buffer.from('offset:-1').toString('base64url')],
    ['an offset of ten digits', Buffer.from('offset:1234567890').toString('base64url')],
  ])('refuse %s', (_what, cursor) => {
    expect(() => decodeOffsetCursor(cursor)).toThrow(ValidationFailedError);
  });
});

describe('toPage', () => {
  const rows = [3, 2, 1].map((n) => ({ createdAt: new Date(Date.UTC(2026, 0, n)), id: `${id.slice(0, -1)}${n}` }));

  it('keeps `limit` rows; the extra one only says there is a next page, which starts after the last row kept', () => {
    const page = toPage(rows, 2, positionOf, (row) => row.id);
    expect(page.items).toEqual([rows[0].id, rows[1].id]);
    expect(afterCursor(page.nextCursor ?? undefined)).toEqual({ at: rows[1].createdAt, id: rows[1].id });
  });

  it('the last page has no next cursor', () => {
    expect(toPage(rows, 3, positionOf, (row) => row.id).nextCursor).toBeNull();
  });
});
