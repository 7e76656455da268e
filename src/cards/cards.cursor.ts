import { ValidationFailedError } from '../common/domain-error';
import { decodeCursor, type KeysetPosition } from '../common/pagination';

/** Keyset position of a stored row (card user, card, operation), newest first. */
export const positionOf = (row: { createdAt: Date; id: string }): KeysetPosition => ({ at: row.createdAt, id: row.id });

/** `?cursor=` of a stored list, as the repository reads it. */
export function afterCursor(cursor: string | undefined): { createdAt: Date; id: string } | undefined {
  if (!cursor) return undefined;
  const { at, id } = decodeCursor(cursor);
  return { createdAt: at, id };
}

/** Offset in a list the provider gives whole (card transactions). */
export function encodeOffsetCursor(offset: number): string {
  return Buffer.from(`offset:${offset}`).toString('base64url');
}

export function decodeOffsetCursor(cursor: string): number {
  const match = /^offset:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new ValidationFailedError([{ field: 'cursor', message: 'cursor is not one this API returned' }]);
  return Number(match[1]);
}
