/**
 * A rolling hour of provider calls in one row: the merchant-wide budget (agent_budgets) and each
 * customer's share (customer_budgets). `minute` (minutes since the Unix epoch) is the newest minute
 * with a call, and `totals[k]` how many calls had been taken by the end of minute `minute - k + 1`
 * (62 of them, newest first). The calls counted at minute N are then one subtraction: the total now
 * less the total at the end of minute N - 61. The window is the 61 minutes of which any part lies
 * in the last hour: a count may be too high (by calls made up to a minute more than an hour ago),
 * never too low.
 *
 * A take reads and writes one row instead of summing a bucket per minute of the hour, with no
 * subquery: aging the row to a later minute is a slice and a fill (the minutes between had no call,
 * so their totals are the last one). The row's lock serialises all its takers, whatever their
 * minute, and the count is checked against its latest version.
 */

/** The totals a row keeps: the 61 minutes counted and the one before them. */
export const TOTALS = 62;

/** The current minute, in minutes since the Unix epoch (the statement's `now()`). */
export const CURRENT_MINUTE = `floor(date_part('epoch', now()) / 60)::int`;

/** How many minutes `minute` is after the row's newest minute (negative for a taker whose now() is older). */
const shift = (row: string, minute: string) => `(${minute} - ${row}.minute)`;

/**
 * The row's position holding the total at the end of the last minute not counted at `minute`
 * (beyond the row's positions, so NULL, once all its minutes left the window). A taker whose
 * now() is older than the row's newest minute counts from the row's newest minute.
 */
const boundary = (row: string, minute: string) => `${row}.totals[LEAST(${TOTALS}, ${TOTALS} - ${shift(row, minute)})]`;

/** The row's calls counted at `minute`. */
export function usedAt(row: string, minute: string): string {
  return `(${row}.totals[1] - COALESCE(${boundary(row, minute)}, ${row}.totals[1]))`;
}

/**
 * The oldest minute with a call counted at `minute`, or `minute` itself when none is: totals never
 * decrease towards the newest, so the first position holding the boundary's total is the one after it.
 */
export function oldestAt(row: string, minute: string): string {
  return `COALESCE(${row}.minute + 2 - NULLIF(array_position(${row}.totals, ${boundary(row, minute)}), 1), ${minute})`;
}

/** The row's calls counted at its newest minute (just after a take). */
export function usedAtNewest(row: string): string {
  return `(${row}.totals[1] - ${row}.totals[${TOTALS}])`;
}

/** The oldest minute with a call counted at the row's newest minute (a row just taken has one). */
export function oldestAtNewest(row: string): string {
  return `(${row}.minute + 2 - array_position(${row}.totals, ${row}.totals[${TOTALS}]))`;
}

/**
 * The totals once one more call is taken at `minute` (the SET of a take, on the locked row):
 * counted in the row's newest minute when `minute` is not after it (a taker whose now() is older
 * than the last take's counts it a little later: too high, never too low), else in a new first
 * position, the minutes between them holding the last total.
 */
export function totalsTakenAt(row: string, minute: string): string {
  const gap = shift(row, minute);
  return `CASE WHEN ${gap} <= 0 THEN (${row}.totals[1] + 1) || ${row}.totals[2:]
    ELSE (${row}.totals[1] + 1) || array_fill(${row}.totals[1], ARRAY[LEAST(${gap}, ${TOTALS}) - 1]) || ${row}.totals[1:${TOTALS} - ${gap}] END`;
}

/** The totals of a customer's first call at any minute: one call, none before. */
export const FIRST_TOTALS = `1 || array_fill(0, ARRAY[${TOTALS - 1}])`;

/** Milliseconds from now until the calls of `oldest` (a minute number) leave the window. */
export function freesInMs(oldest: string): string {
  return `((${oldest} + ${TOTALS - 1})::float8 * 60000 - date_part('epoch', now()) * 1000)`;
}

/** Whether none of the row's calls is counted any more (a customer's row the sweep may delete). */
export function leftTheWindow(row: string): string {
  return `${row}.minute <= ${CURRENT_MINUTE} - ${TOTALS - 1}`;
}
